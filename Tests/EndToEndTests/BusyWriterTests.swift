import AutosaveTestKit
import Foundation
import Testing

/// A process that keeps a file open and writes a line to it every 20 ms (a logger) and a client
/// editing the same file: the client's edit waited until the writer stopped. Each overdue save
/// first looked twice (about 40 ms) whether the writer really held the file, and the writer's
/// next line, landing in that look, failed the save's compare every time.
///
/// The class of bug: *a save that another writer can always outrun*. The property: an edit is
/// on disk within `autosave.maxDelayMs` of its first unsaved edit and one save's time, however
/// often another process writes the file, and none of that writer's lines is lost.
@Suite struct BusyWriterTests {
    @Test func anEditIsSavedWhileALoggerKeepsWritingTheFile() async throws {
        let project = try TemporaryDirectory()
        try project.write("app.log", (1...5).map { "start \($0)\n" }.joined())
        let agent = try await AgentProcess.started(on: project, config: #"{"autosave": {"delayMs": 300, "maxDelayMs": 1000}}"#)
        let edited = "CLIENT\n" + (2...5).map { "start \($0)\n" }.joined()
        #expect(try await AgentProcess.client(["write", "app.log"], in: project, stdin: edited).status == 0)
        // The logger: one descriptor, a line every 20 ms, for 8 s unless stopped.
        let logger = Process()
        logger.executableURL = URL(fileURLWithPath: "/bin/bash")
        logger.arguments = ["-c", "exec 3>>app.log; for i in $(seq 1 400); do echo \"line $i\" >&3; sleep 0.02; done"]
        logger.currentDirectoryURL = URL(fileURLWithPath: project.path)
        try logger.run()
        let saved = try await agent.stderrLines.first(timeout: .seconds(6), "saved while the logger writes") {
            $0.contains(" saved ") && $0.contains("path=app.log")
        }
        #expect(logger.isRunning, "saved before the logger stopped: \(saved)")
        logger.waitUntilExit()
        #expect(try await AgentProcess.client(["sync"], in: project).status == 0)
        #expect(try await AgentProcess.client(["stop"], in: project).status == 0)
        #expect(await agent.exitStatus() == 0)
        let lines = try project.read("app.log").split(separator: "\n").map(String.init)
        #expect(lines.first == "CLIENT", "the client's edit is on disk")
        #expect(lines.filter { $0.hasPrefix("line ") } == (1...400).map { "line \($0)" }, "every line the logger wrote, in order")
    }
}
