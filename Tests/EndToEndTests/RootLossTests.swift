import AutosaveTestKit
import Foundation
import Testing

/// The project folder itself removed under a running agent: its unsaved edits go outside the
/// project, the agent exits with status 1, and nothing is created where the project was.
@Suite struct RootLossTests {
    /// `rm -rf` of the project used to make the agent re-create the folder (state-dir-lost), and
    /// a SIGTERM after it could hang.
    @Test func aRemovedRootLeavesUnsavedEditsOutsideItAndEndsTheAgent() async throws {
        let outside = try TemporaryDirectory()
        let project = try TemporaryDirectory()
        try project.write("src/a.txt", "saved\n")
        try project.write("autosave.json", #"{"autosave": {"delayMs": 60000, "maxDelayMs": 60000}}"#)
        // env(1) sets the variable: Foundation's Process is left to pass the test's own environment.
        let agent = try AgentProcess(
            ["XDG_STATE_HOME=\(outside.path)", AgentProcess.binary, "run", project.path], executable: "/usr/bin/env",
            in: outside.path)
        _ = try await agent.stderrLines.first(timeout: .seconds(30), "listening") { $0.contains(" listening ") }
        #expect(try await AgentProcess.client(["write", "src/a.txt"], in: project, stdin: "unsaved edit\n").status == 0)
        try FileManager.default.removeItem(atPath: project.path)
        #expect(await agent.exitStatus(timeout: .seconds(20)) == 1)
        let lines = agent.stderrLines.elements
        let orphaned = try #require(lines.first { $0.contains(" orphaned path=src/a.txt") })
        let copy = try #require(orphaned.split(separator: " ").first { $0.hasPrefix("copy=") }).dropFirst("copy=".count)
        #expect(copy.hasPrefix(outside.path + "/autosave/orphans/"))
        #expect(try String(contentsOfFile: String(copy), encoding: .utf8) == "unsaved edit\n")
        #expect(lines.contains { $0.contains(" root-removed ") && $0.contains("orphaned=1") })
        #expect(!FileManager.default.fileExists(atPath: project.path), "the agent made the deleted folder again")
    }
}

/// The project folder renamed under a running agent: the agent follows it.
@Suite struct RootMoveTests {
    /// `mv project project2` used to leave an agent whose saves failed for ever, which told
    /// clients in the new place "outside the root" and hung on SIGTERM.
    @Test func aRenamedRootIsFollowedWithItsUnsavedEditsAndItsClients() async throws {
        let parent = try TemporaryDirectory()
        let before = parent.url("project")
        let after = parent.url("renamed")
        try parent.write("project/src/a.txt", "saved\n")
        try parent.write("project/autosave.json", #"{"autosave": {"delayMs": 60000, "maxDelayMs": 60000}}"#)
        let agent = try AgentProcess(["run", before], in: parent.path)
        _ = try await agent.stderrLines.first(timeout: .seconds(30), "listening") { $0.contains(" listening ") }
        try parent.write("input", "unsaved before the move\n")
        #expect(try await AgentProcess.run(["write", "src/a.txt", "--from", parent.url("input")], in: before).status == 0)
        guard rename(before, after) == 0 else { throw POSIXError(.EIO) }
        _ = try await agent.stderrLines.first(timeout: .seconds(30), "listening again") {
            $0.contains(" listening socket=\(after)/.autosave/agent.sock")
        }
        #expect(agent.stderrLines.elements.contains { $0.contains(" root-moved from=\(before) to=\(after) ") })
        try parent.write("input", "written in the new place\n")
        #expect(try await AgentProcess.run(["write", "src/b.txt", "--from", parent.url("input")], in: after).status == 0)
        let cat = try await AgentProcess.run(["cat", "src/a.txt"], in: after)
        #expect(cat.stdout == "unsaved before the move", "the unsaved edit followed the root")
        agent.signal(SIGTERM)
        #expect(await agent.exitStatus(timeout: .seconds(20)) == 0)
        #expect(try String(contentsOfFile: after + "/src/a.txt", encoding: .utf8) == "unsaved before the move\n")
        #expect(try String(contentsOfFile: after + "/src/b.txt", encoding: .utf8) == "written in the new place\n")
        #expect(!FileManager.default.fileExists(atPath: before), "the agent made the old folder again")
    }
}
