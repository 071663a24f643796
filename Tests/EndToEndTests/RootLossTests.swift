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
        let agent = try AgentProcess(["run", project.path], in: outside.path, environment: ["XDG_STATE_HOME": outside.path])
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
