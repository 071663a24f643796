import AutosaveTestKit
import Foundation
import Testing

/// Through the CLI: an accepted edit always lands somewhere, and `stop` says when one did not.
@Suite struct EditsLandTests {
    @Test func aWriteUnderAMissingFolderIsRefusedUnlessParentsAreAskedFor() async throws {
        let project = try TemporaryDirectory()
        let agent = try await AgentProcess.started(on: project)
        let refused = try await AgentProcess.client(["write", "nodir/sub/f.txt"], in: project, stdin: "edit\n")
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("folder nodir/sub does not exist; nothing was changed"), "\(refused.stderr)")
        let made = try await AgentProcess.client(["write", "--parents", "nodir/sub/f.txt"], in: project, stdin: "edit\n")
        #expect(made.status == 0, "\(made.stderr)")
        #expect(try await AgentProcess.client(["save", "nodir/sub/f.txt"], in: project).status == 0)
        #expect(try project.read("nodir/sub/f.txt") == "edit\n")
        agent.signal(SIGTERM)
        #expect(await agent.exitStatus() == 0)
    }

    /// `autosave stop` and the agent exited 0 after "exiting with the edit unsaved".
    @Test func stopFailsWhenAnEditIsOnDiskNowhere() async throws {
        let project = try TemporaryDirectory()
        try project.write("src/a.txt", "old\n")
        let agent = try await AgentProcess.started(on: project, config: #"{"autosave": {"delayMs": 60000, "maxDelayMs": 60000}}"#)
        #expect(try await AgentProcess.client(["write", "src/a.txt"], in: project, stdin: "stranded\n").status == 0)
        // Fault injection with the real filesystem: the folder goes, and no conflict copy can be made.
        try FileManager.default.removeItem(atPath: project.url("src"))
        try project.write(".autosave/conflicts", "a file where the copies' folder goes")
        let stop = try await AgentProcess.client(["stop"], in: project)
        #expect(stop.status == 1)
        #expect(stop.stderr.contains("src/a.txt: the unsaved edit is on disk nowhere"), "\(stop.stderr)")
        #expect(await agent.exitStatus() == 1)
        let lost = try #require(agent.stderrLines.elements.first { $0.contains(" lost-to-disk ") })
        #expect(lost.contains("path=src/a.txt") && lost.contains("journal=\(project.path)/.autosave/journal"))
        // The journal still holds it: the next agent brings the edit back.
        try FileManager.default.removeItem(atPath: project.url(".autosave/conflicts"))
        try FileManager.default.createDirectory(atPath: project.url("src"), withIntermediateDirectories: false)
        let next = try await AgentProcess.started(on: project)
        #expect(try await AgentProcess.client(["cat", "src/a.txt"], in: project).stdout == "stranded")
        next.signal(SIGTERM)
        #expect(await next.exitStatus() == 0)
        #expect(try project.read("src/a.txt") == "stranded\n")
    }

    @Test func stopNamesTheConflictCopyOfAnEditItCouldNotSaveAtItsPath() async throws {
        let project = try TemporaryDirectory()
        try project.write("src/a.txt", "old\n")
        let agent = try await AgentProcess.started(on: project, config: #"{"autosave": {"delayMs": 60000, "maxDelayMs": 60000}}"#)
        #expect(try await AgentProcess.client(["write", "src/a.txt"], in: project, stdin: "kept aside\n").status == 0)
        try FileManager.default.removeItem(atPath: project.url("src"))
        let stop = try await AgentProcess.client(["stop"], in: project)
        #expect(stop.status == 0)
        let copy = try #require(stop.stderr.components(separatedBy: "its unsaved edit is in ").last)
        #expect(try project.read(copy.trimmingCharacters(in: .whitespacesAndNewlines)) == "kept aside\n")
        #expect(await agent.exitStatus() == 0)
    }

    /// `autosave stop` saved three buffers and said so, then the agent's `shutdown` line said
    /// `saved=0`: its own flush found nothing left and counted only itself.
    @Test func theShutdownLineCountsWhatStopSaved() async throws {
        let project = try TemporaryDirectory()
        let agent = try await AgentProcess.started(on: project, config: #"{"autosave": {"delayMs": 60000, "maxDelayMs": 60000}}"#)
        for name in ["a.txt", "b.txt", "c.txt"] {
            #expect(try await AgentProcess.client(["write", name], in: project, stdin: "\(name)\n").status == 0)
        }
        let stop = try await AgentProcess.client(["stop"], in: project)
        #expect(stop.status == 0)
        #expect(await agent.exitStatus() == 0)
        #expect(try ["a.txt", "b.txt", "c.txt"].map { try project.read($0) } == ["a.txt\n", "b.txt\n", "c.txt\n"])
        let shutdown = try #require(agent.stderrLines.elements.first { $0.contains(" shutdown ") })
        #expect(shutdown.contains("saved=3"), "\(shutdown)")
    }
}
