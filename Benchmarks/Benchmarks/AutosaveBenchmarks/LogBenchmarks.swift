// Log lines per second: every `saved` and `external-change` the agent reports is rendered on the
// path that reports it, so its cost is part of the save cost and the notice latency.
import AutosaveKit
import Benchmark
import Foundation
import Logging

func registerLogBenchmarks() {
    let fields: Logger.Metadata = [
        "path": "src/module7/file42.swift", "revision": "1234", "bytes": "4096", "ms": "0.7",
    ]
    let stamp = Date()
    for format in [LogFormat.json, .text] {
        Benchmark("Log.render saved line (\(format.rawValue))", configuration: .init(scalingFactor: .kilo)) { benchmark in
            for _ in benchmark.scaledIterations {
                blackHole(LogLine.render(format: format, timestamp: stamp, level: .info, event: "saved", fields: fields))
            }
        }
    }
}
