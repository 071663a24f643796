import AutosaveTestKit
import Foundation
import Testing

/// `autosave patch` with what `git diff` makes: every file or none, into the buffers, so a
/// person's unsaved edit elsewhere in the same file is kept.
@Suite struct PatchCommandTests {
    @Test func aGitDiffLandsInTheBuffersAndAPatchThatDoesNotFitChangesNothing() async throws {
        let project = try TemporaryDirectory()
        let outside = try TemporaryDirectory()
        try project.write("a.txt", (1...30).map { "\($0)\n" }.joined())
        try project.write("b.txt", "x\ny\n")
        try runTool("/usr/bin/git", ["-C", project.path, "init", "-q"])
        try runTool("/usr/bin/git", ["-C", project.path, "add", "a.txt", "b.txt"])
        try runTool("/usr/bin/git", ["-C", project.path, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "start"])
        try runTool("/bin/sed", ["-i", "s/^25$/twenty-five/", project.url("a.txt")])
        try runTool("/bin/sed", ["-i", "s/^y$/Y/", project.url("b.txt")])
        let diff = try await AgentProcess.run(["-C", project.path, "diff"], executable: "/usr/bin/git")
        try runTool("/usr/bin/git", ["-C", project.path, "checkout", "-q", "."])
        let patch = try outside.write("change.diff", diff.stdout + "\n")
        let agent = try await AgentProcess.started(on: project, config: #"{"autosave": {"delayMs": 60000, "maxDelayMs": 60000}}"#)
        // A person's unsaved edit at the top of a.txt, far from the patch's hunk.
        #expect(try await AgentProcess.client(["write", "a.txt"], in: project, stdin: "one\n" + (2...30).map { "\($0)\n" }.joined()).status == 0)

        let checked = try await AgentProcess.client(["patch", "--check", patch], in: project)
        #expect(checked.status == 0 && checked.stdout.contains(#""applies":true"#), "\(checked)")
        #expect(try await AgentProcess.client(["cat", "b.txt"], in: project).stdout == "x\ny", "--check changes nothing")

        let applied = try await AgentProcess.client(["patch", patch], in: project)
        #expect(applied.status == 0, "\(applied)")
        #expect(applied.stdout == #"{"path":"a.txt","revision":2}"# + "\n" + #"{"path":"b.txt","revision":1}"#)
        let a = try await AgentProcess.client(["cat", "a.txt"], in: project).stdout
        #expect(a.hasPrefix("one\n2\n") && a.contains("\ntwenty-five\n"), "the patch and the unsaved edit are both there")
        #expect(try await AgentProcess.client(["cat", "b.txt"], in: project).stdout == "x\nY")

        // Applied again, a.txt's hunk no longer fits: refused whole, b.txt untouched too.
        let again = try await AgentProcess.client(["patch", patch], in: project)
        #expect(again.status == 1)
        #expect(again.stderr.contains("a.txt: hunk @@ -22,7 +22,7 @@ does not apply: line 25 should be `25` but is `twenty-five`"), "\(again)")
        #expect(try await AgentProcess.client(["status", "--json"], in: project).stdout.contains(#""path":"b.txt","revision":1"#))
        agent.signal(SIGTERM)
        #expect(await agent.exitStatus() == 0)
        #expect(try project.read("b.txt") == "x\nY\n")
    }
}
