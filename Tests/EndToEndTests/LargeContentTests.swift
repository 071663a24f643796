import AutosaveTestKit
import Foundation
import Testing

/// Large content goes through the CLI and the socket whole: what `write` sends is what `cat`
/// prints and what lands on disk, byte for byte. (Its speed is a figure of `bench/compare`.)
@Suite struct LargeContentTests {
    /// Runs the CLI in the project with its standard input and output on files, as a shell
    /// redirect does (the content is too large to hold as lines). Its exit is awaited, not
    /// waited for: a test thread blocked for seconds starves the other tests' tasks.
    func cli(_ arguments: [String], in project: TemporaryDirectory, input: String? = nil, output: String? = nil) async throws -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: AgentProcess.binary)
        process.arguments = arguments
        process.currentDirectoryURL = URL(fileURLWithPath: project.path)
        if let input { process.standardInput = FileHandle(forReadingAtPath: input) }
        if let output {
            _ = FileManager.default.createFile(atPath: output, contents: nil)
            process.standardOutput = FileHandle(forWritingAtPath: output)
        }
        let exited = AsyncStream<Int32> { continuation in
            process.terminationHandler = { continuation.yield($0.terminationStatus); continuation.finish() }
        }
        try process.run()
        for await status in exited { return status }
        return process.terminationStatus
    }

    @Test func fiftyMegabytesGoThroughWriteAndCatWhole() async throws {
        let project = try TemporaryDirectory()
        let outside = try TemporaryDirectory()
        // 50 MiB of text lines, different from one another.
        var lines = [UInt8]()
        lines.reserveCapacity(50 << 20 + 100)
        var line = 0
        while lines.count < 50 << 20 {
            lines += Array("line \(line) of a large file, with some words to make it longer\n".utf8)
            line += 1
        }
        let content = lines
        try TemporaryDirectory.writeFile(outside.url("in.txt"), content)
        let agent = try await AgentProcess.started(on: project, config: #"{"autosave": {"delayMs": 100}}"#)
        #expect(try await cli(["write", "big.txt"], in: project, input: outside.url("in.txt")) == 0)
        #expect(try await cli(["cat", "big.txt"], in: project, output: outside.url("out.txt")) == 0)
        #expect(FileManager.default.contents(atPath: outside.url("out.txt")) == Data(content), "cat prints what write sent")
        _ = try await agent.stderrLines.first(timeout: .seconds(60), "saved") { $0.contains(" saved path=big.txt revision=1 bytes=\(content.count)") }
        #expect(FileManager.default.contents(atPath: project.url("big.txt")) == Data(content), "the file holds it all")
        #expect(try await cli(["stop"], in: project) == 0)
        #expect(await agent.exitStatus() == 0)
    }
}
