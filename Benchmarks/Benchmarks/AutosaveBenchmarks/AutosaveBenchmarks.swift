// The in-process benchmarks of AutosaveKit: one executable target that package-benchmark's
// BenchmarkPlugin turns into a runner.
//
// Run all:  cd Benchmarks && swift package --disable-sandbox benchmark
// Run one:  cd Benchmarks && swift package --disable-sandbox benchmark --filter 'Merge.*'
//
// Figures are per unit of work: per edit, per merge, per kernel event, per journal append
// (the scaling factor of each benchmark says how many units one measured iteration holds).
import Benchmark

/// What every benchmark reports: how many units per second, how long one takes, how many heap
/// allocations one makes, and how many CPU instructions (0 where perf counters are unavailable).
let unitMetrics: [BenchmarkMetric] = [.throughput, .wallClock, .mallocCountTotal, .instructions]

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: unitMetrics, warmupIterations: 3, maxDuration: .seconds(3), maxIterations: 10_000)

    registerEditBenchmarks()
    registerRangedEditBenchmarks()
    registerMergeBenchmarks()
    registerSettleBenchmarks()
    registerJournalBenchmarks()
    registerLogBenchmarks()
}
