import AutosaveTestKit
import Foundation
import Testing

/// `autosave changes` as a tool that keeps state about files runs it: a first call, then each
/// next with the clock the last printed.
@Suite struct ChangesCommandTests {
    /// Outside writes and the agent's own saves are both changes of the tree; a clock from
    /// before the agent restarted is answered `fresh` (the tool looks at everything), never with
    /// a list that misses what happened while no agent watched.
    @Test func changesSinceAClockThenFreshAfterARestart() async throws {
        let project = try TemporaryDirectory()
        try project.write("kept.txt", "old\n")
        var agent = try await AgentProcess.started(on: project)
        let first = try await changes(in: project)
        #expect(first["fresh"] as? Bool == true, "a first question is answered fresh")
        let start = try #require(first["clock"] as? String)

        try project.write("kept.txt", "changed by someone else\n")
        let written = try await AgentProcess.run(["-c", "printf 'through the agent\\n' | \"$0\" write new.txt && \"$0\" save new.txt", AgentProcess.binary], executable: "/bin/sh", in: project.path)
        #expect(written.status == 0, "\(written.stderr)")
        let next = try await changes(in: project, since: start)
        #expect(next["fresh"] as? Bool == false)
        let listed = (next["changes"] as? [[String: Any]] ?? []).map { "\($0["kind"] ?? "") \($0["path"] ?? "")" }
        #expect(listed.contains("modified kept.txt"), "\(listed)")
        #expect(listed.contains("created new.txt"), "the agent's own save: \(listed)")
        let clock = try #require(next["clock"] as? String)

        agent.signal(SIGTERM)
        #expect(await agent.exitStatus() == 0)
        try project.write("while-no-agent.txt", "unseen\n")
        agent = try await AgentProcess.started(on: project)
        let afterRestart = try await changes(in: project, since: clock)
        #expect(afterRestart["fresh"] as? Bool == true)
        #expect((afterRestart["changes"] as? [Any])?.isEmpty == true)
        // The text form, as a person reads it.
        let text = try await AgentProcess.run(["changes", "--since", clock], in: project.path)
        #expect(text.stdout.contains("fresh") && text.stdout.contains("clock autosave:"), "\(text.stdout)")
        let refused = try await AgentProcess.run(["changes", "--glob", "{a,b"], in: project.path)
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("{a,b") && refused.stderr.contains("nothing was done"), "\(refused.stderr)")
        agent.signal(SIGTERM)
        #expect(await agent.exitStatus() == 0)
    }

    private func changes(in project: TemporaryDirectory, since: String? = nil) async throws -> [String: Any] {
        let run = try await AgentProcess.run(["changes", "--json"] + (since.map { ["--since", $0] } ?? []), in: project.path)
        #expect(run.status == 0, "\(run.stderr)")
        return try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
    }
}
