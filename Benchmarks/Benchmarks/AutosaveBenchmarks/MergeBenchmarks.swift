// Three-way merge of a 1 MiB text file whose two sides each changed 1% of the lines, apart.
import AutosaveKit
import Benchmark

/// The three versions of a 1 MiB file: `ours` rewrites every 100th line from line 0, `theirs`
/// every 100th line from line 50, so the sides never touch and the merge is clean.
final class MergeFixture {
    var base: [UInt8] = []
    var ours: [UInt8] = []
    var theirs: [UInt8] = []

    /// Builds the inputs and checks, once, that they merge into exactly both sides' changes.
    func setUp() throws {
        var lines: [[UInt8]] = []
        var size = 0
        while size < 1 << 20 {
            let line = Array("\(lines.count): lorem ipsum dolor sit amet, consectetur adipiscing elit.\n".utf8)
            lines.append(line)
            size += line.count
        }
        var ourLines = lines
        var theirLines = lines
        var bothLines = lines
        for index in stride(from: 0, to: lines.count, by: 100) {
            ourLines[index] = Array("\(index): changed here by the client\n".utf8)
            bothLines[index] = ourLines[index]
        }
        for index in stride(from: 50, to: lines.count, by: 100) {
            theirLines[index] = Array("\(index): changed on disk by another editor\n".utf8)
            bothLines[index] = theirLines[index]
        }
        base = lines.flatMap { $0 }
        ours = ourLines.flatMap { $0 }
        theirs = theirLines.flatMap { $0 }
        guard LineMerge.merge(base: base, ours: ours, theirs: theirs) == .merged(bothLines.flatMap { $0 }) else {
            throw BenchmarkSetupError("LineMerge did not merge the benchmark's non-overlapping 1% edits into both sides' changes")
        }
    }
}

func registerMergeBenchmarks() {
    let fixture = MergeFixture()
    Benchmark(
        "Merge: LineMerge of 1 MiB, 1% of lines changed on each side (per merge)",
        configuration: .init(
            metrics: unitMetrics + [.peakMemoryResident], maxIterations: 200, setup: { try fixture.setUp() })
    ) { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(LineMerge.merge(base: fixture.base, ours: fixture.ours, theirs: fixture.theirs))
        }
    }
}
