import AutosaveTestKit
import Foundation
import Testing

/// `autosave undo --who` as a user runs it: one writer's changes taken back with the others'
/// kept, a collision that changes nothing, and a dry run whose diff `autosave patch` applies.
@Suite struct UndoCommandTests {
    func client(_ arguments: [String], in project: TemporaryDirectory, stdin: String? = nil) async throws -> (status: Int32, stdout: String, stderr: String) {
        try await AgentProcess.client(arguments, in: project, stdin: stdin)
    }

    static let lines = (1...12).map { "line \($0)\n" }.joined()

    /// A file the baseline stored; a person's edit of line 1 through the agent; then `sed -i`
    /// over line 8 from a shell; then the person's edit of line 2. Returns the running agent.
    func sedBetweenTwoEdits(_ project: TemporaryDirectory) async throws -> AgentProcess {
        try project.write("notes.txt", Self.lines)
        let agent = try await AgentProcess.started(on: project)
        _ = try await agent.stderrLines.first(timeout: .seconds(30), "the baseline") { $0.contains("history-baseline") && $0.contains("state=done") }
        let first = Self.lines.replacingOccurrences(of: "line 1\n", with: "line 1, the person's\n")
        #expect(try await client(["write", "notes.txt"], in: project, stdin: first).status == 0)
        #expect(try await client(["save", "notes.txt"], in: project).status == 0)
        try runTool("/bin/sed", ["-i", "s/^line 8$/line 8, sed's/", project.url("notes.txt")])
        #expect(try await client(["sync"], in: project).status == 0)
        let now = try String(contentsOfFile: project.url("notes.txt"), encoding: .utf8)
        #expect(now.contains("line 8, sed's"), "sed's change reached the buffer")
        #expect(try await client(["write", "notes.txt"], in: project, stdin: now.replacingOccurrences(of: "line 2\n", with: "line 2, the person's\n")).status == 0)
        #expect(try await client(["save", "notes.txt"], in: project).status == 0)
        return agent
    }

    static let undone = lines.replacingOccurrences(of: "line 1\n", with: "line 1, the person's\n")
        .replacingOccurrences(of: "line 2\n", with: "line 2, the person's\n")

    @Test func undoWhoExternalTakesBackASedRunAndKeepsThePersonsEdits() async throws {
        let project = try TemporaryDirectory()
        let agent = try await sedBetweenTwoEdits(project)
        let undo = try await client(["undo", "--who", "external", "--since", "10m"], in: project)
        #expect(undo.status == 0, "\(undo.stderr)")
        #expect(undo.stdout.hasPrefix("undone notes.txt (version "), "\(undo.stdout)")
        #expect(try String(contentsOfFile: project.url("notes.txt"), encoding: .utf8) == Self.undone)
        let listed = try await client(["history", "notes.txt", "--json", "--limit", "1"], in: project)
        let latest = try #require((try JSONSerialization.jsonObject(with: Data(listed.stdout.utf8)) as? [[String: Any]])?.first)
        #expect(latest["who"] as? String == "undo", "the undo is a version of its own")
        // And it can be undone in turn.
        #expect(try await client(["undo", "--who", "undo"], in: project).status == 0)
        #expect(try String(contentsOfFile: project.url("notes.txt"), encoding: .utf8).contains("line 8, sed's"))
        agent.signal(SIGTERM)
        #expect(await agent.exitStatus() == 0)
    }

    @Test func aDryRunsDiffAppliesWithPatchAndGivesWhatTheUndoWould() async throws {
        let project = try TemporaryDirectory()
        let agent = try await sedBetweenTwoEdits(project)
        let dryRun = try await client(["undo", "--who", "external", "--dry-run"], in: project)
        #expect(dryRun.status == 0, "\(dryRun.stderr)")
        #expect(dryRun.stdout.contains("-line 8, sed's"), "\(dryRun.stdout)")
        #expect(try String(contentsOfFile: project.url("notes.txt"), encoding: .utf8).contains("line 8, sed's"), "a dry run changes nothing")
        // The helper hands output back without its last line break.
        try (dryRun.stdout + "\n").write(toFile: project.url("undo.diff"), atomically: true, encoding: .utf8)
        let patched = try await client(["patch", "undo.diff"], in: project)
        #expect(patched.status == 0, "\(patched.stderr)")
        #expect(try await client(["save", "notes.txt"], in: project).status == 0)
        #expect(try String(contentsOfFile: project.url("notes.txt"), encoding: .utf8) == Self.undone)
        agent.signal(SIGTERM)
        #expect(await agent.exitStatus() == 0)
    }

    @Test func anUndoThatCollidesWithALaterEditChangesNothingAndNamesTheCopy() async throws {
        let project = try TemporaryDirectory()
        try project.write("a.txt", "keep\nchange me\n")
        let agent = try await AgentProcess.started(on: project)
        _ = try await agent.stderrLines.first(timeout: .seconds(30), "the baseline") { $0.contains("history-baseline") && $0.contains("state=done") }
        try runTool("/bin/sed", ["-i", "s/^change me$/changed by sed/", project.url("a.txt")])
        #expect(try await client(["sync"], in: project).status == 0)
        // A person then fixes the very line sed wrote.
        #expect(try await client(["write", "a.txt"], in: project, stdin: "keep\nchanged by sed, then by hand\n").status == 0)
        #expect(try await client(["save", "a.txt"], in: project).status == 0)

        let undo = try await client(["undo", "--who", "external"], in: project)
        #expect(undo.status == 1)
        #expect(undo.stderr.contains("not undone: a.txt: taking external's change back overlaps a later edit"), "\(undo.stderr)")
        #expect(try String(contentsOfFile: project.url("a.txt"), encoding: .utf8) == "keep\nchanged by sed, then by hand\n")
        let copy = try #require(undo.stderr.range(of: ".autosave/conflicts/").map { String(undo.stderr[$0.lowerBound...].prefix { !$0.isWhitespace }) })
        #expect(try String(contentsOfFile: project.url(copy), encoding: .utf8) == "keep\nchange me\n", "the file as it was before sed")
        agent.signal(SIGTERM)
        #expect(await agent.exitStatus() == 0)
    }

    @Test func aFileMovedFromAShellGoesBackToItsName() async throws {
        let project = try TemporaryDirectory()
        try project.write("old.txt", "moved\n")
        let agent = try await AgentProcess.started(on: project)
        _ = try await agent.stderrLines.first(timeout: .seconds(30), "the baseline") { $0.contains("history-baseline") && $0.contains("state=done") }
        try runTool("/bin/mv", [project.url("old.txt"), project.url("new.txt")])
        #expect(try await client(["sync"], in: project).status == 0)
        let undo = try await client(["undo", "--who", "external"], in: project)
        #expect(undo.status == 0, "\(undo.stderr)")
        #expect(undo.stdout.hasPrefix("moved back from new.txt to old.txt"), "\(undo.stdout)")
        #expect(try String(contentsOfFile: project.url("old.txt"), encoding: .utf8) == "moved\n")
        #expect(!FileManager.default.fileExists(atPath: project.url("new.txt")))
        agent.signal(SIGTERM)
        #expect(await agent.exitStatus() == 0)
    }

    @Test func aWriterThatIsNoneIsAClearError() async throws {
        let project = try TemporaryDirectory()
        let agent = try await AgentProcess.started(on: project)
        let undo = try await client(["undo", "--who", "cli,nvim"], in: project)
        #expect(undo.status != 0)
        #expect(undo.stderr.contains("\"cli,nvim\" names no writer"), "\(undo.stderr)")
        let since = try await client(["undo", "--who", "cli", "--since", "banana"], in: project)
        #expect(since.status != 0)
        #expect(since.stderr.contains("--since takes a time"), "\(since.stderr)")
        agent.signal(SIGTERM)
        #expect(await agent.exitStatus() == 0)
    }
}
