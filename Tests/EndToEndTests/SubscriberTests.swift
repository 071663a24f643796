import AutosaveTestKit
import Foundation
import Testing

/// `autosave events` as a user runs it, its output going nowhere fast.
@Suite struct SubscriberTests {
    /// After ~10.8k of 15k events nothing more arrived, the connection stayed open, and
    /// `autosave events` waited for ever.
    @Test func aLaggingSubscriberIsToldAndLetGo() async throws {
        let project = try TemporaryDirectory()
        let agent = try await AgentProcess.started(on: project, config: #"{"watch": {"settleMs": 0}}"#)
        // The reader lags: nobody reads its standard output until the agent has cut it off.
        let events = Process()
        events.executableURL = URL(fileURLWithPath: AgentProcess.binary)
        events.arguments = ["events"]
        events.currentDirectoryURL = URL(fileURLWithPath: project.path)
        let output = Pipe()
        let errors = Pipe()
        events.standardOutput = output
        events.standardError = errors
        try events.run()
        var first = Data()
        while !String(decoding: first, as: UTF8.self).contains("subscribed") {
            let chunk = output.fileHandleForReading.availableData
            #expect(!chunk.isEmpty, "autosave events ended before it subscribed")
            if chunk.isEmpty { return }
            first.append(chunk)
        }
        // Up to 20,000 new files, a thousand at a time as fast as a shell makes them, each thousand
        // seen by the agent before the next (a kernel queue overflow would fold them into one rescan).
        let many = project.url("many")
        try FileManager.default.createDirectory(atPath: many, withIntermediateDirectories: false)
        for batch in 0..<20 where !agent.stderrLines.elements.contains(where: { $0.contains(" subscriber-dropped ") }) {
            let last = "f\(batch * 1000 + 999).txt"
            try runTool("/bin/sh", ["-c", "cd \(many) && seq -f f%g.txt \(batch * 1000) \(batch * 1000 + 999) | xargs touch"])
            _ = try await agent.stderrLines.first(timeout: .seconds(60), last) { $0.contains("path=many/\(last) ") }
        }
        let dropped = try await agent.stderrLines.first(timeout: .seconds(120), "subscriber-dropped") { $0.contains(" subscriber-dropped ") }
        #expect(dropped.contains("backlog=10000"))
        // Now it reads: it gets what the agent held for it, then the notice, then the end.
        let rest = Task.detached { output.fileHandleForReading.readDataToEndOfFile() }
        let message = Task.detached { errors.fileHandleForReading.readDataToEndOfFile() }
        let lines = String(decoding: await rest.value, as: UTF8.self).split(separator: "\n")
        events.waitUntilExit()
        #expect(events.terminationStatus == 1)
        #expect(String(decoding: await message.value, as: UTF8.self).contains("fell behind and missed"))
        #expect(lines.count > 1_000, "the held events came first")
        #expect(agent.stderrLines.elements.filter { $0.contains(" subscriber-dropped ") }.count == 1, "logged once")
        agent.signal(SIGTERM)
        #expect(await agent.exitStatus() == 0)
    }
}
