import AutosaveTestKit
import Foundation
import Testing

/// `autosave history`, `show` and `restore` as a user runs them, against real tools that throw
/// work away.
@Suite struct HistoryCommandTests {
    func client(_ arguments: [String], in project: TemporaryDirectory, stdin: String? = nil) async throws -> (status: Int32, stdout: String, stderr: String) {
        try await AgentProcess.client(arguments, in: project, stdin: stdin)
    }

    @Test func gitCheckoutOverASavedEditIsUndoneWithShowAndRestore() async throws {
        let project = try TemporaryDirectory()
        try project.write("notes.txt", "committed\n")
        try runTool("/usr/bin/git", ["-C", project.path, "init", "-q"])
        try runTool("/usr/bin/git", ["-C", project.path, "add", "notes.txt"])
        try runTool("/usr/bin/git", ["-C", project.path, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "start"])
        let agent = try await AgentProcess.started(on: project)
        #expect(try await client(["write", "notes.txt"], in: project, stdin: "a morning's work\n").status == 0)
        #expect(try await client(["save", "notes.txt"], in: project).status == 0)
        try runTool("/usr/bin/git", ["-C", project.path, "checkout", "--", "notes.txt"])
        #expect(try await client(["sync"], in: project).status == 0)
        #expect(try String(contentsOfFile: project.url("notes.txt"), encoding: .utf8) == "committed\n", "git threw the work away")

        let listed = try await client(["history", "notes.txt", "--json"], in: project)
        #expect(listed.status == 0, "\(listed.stderr)")
        let versions = try #require(try JSONSerialization.jsonObject(with: Data(listed.stdout.utf8)) as? [[String: Any]])
        #expect(versions.map { $0["kind"] as? String } == ["modified", "saved", "baseline"])
        #expect(versions.map { $0["who"] as? String } == ["external", "cli", "external"])
        #expect(versions.allSatisfy { ($0["time"] as? String)?.hasSuffix("Z") == true && $0["path"] as? String == "notes.txt" })

        let shown = try await client(["show", "notes.txt@-1"], in: project)
        // The helper hands output back as lines, without the last line break.
        #expect(shown.stdout == "a morning's work", "show prints the version byte for byte")
        let text = try await client(["history", "notes.txt"], in: project)
        #expect(text.stdout.split(separator: "\n").count == 3)
        #expect(text.stdout.contains("  cli  saved  17 B  +1 -1  notes.txt"), "lines added and removed: \(text.stdout)")

        let restored = try await client(["restore", "notes.txt@-1"], in: project)
        #expect(restored.status == 0, "\(restored.stderr)")
        #expect(try await client(["save", "notes.txt"], in: project).status == 0)
        #expect(try String(contentsOfFile: project.url("notes.txt"), encoding: .utf8) == "a morning's work\n")
        let after = try await client(["history", "notes.txt", "--json", "--limit", "1"], in: project)
        let latest = try #require((try JSONSerialization.jsonObject(with: Data(after.stdout.utf8)) as? [[String: Any]])?.first)
        #expect(latest["kind"] as? String == "restored")
        #expect(latest["who"] as? String == "restore")
        agent.signal(SIGTERM)
        #expect(await agent.exitStatus() == 0)
    }

    @Test func aConflictCopyIsListedWithTheFileAndRestoredByItsId() async throws {
        let project = try TemporaryDirectory()
        try project.write("notes.txt", "line\n")
        let agent = try await AgentProcess.started(on: project, config: #"{"autosave": {"delayMs": 60000, "maxDelayMs": 60000}}"#)
        #expect(try await client(["write", "notes.txt"], in: project, stdin: "mine\n").status == 0)
        // Another tool writes the same line while the edit is unsaved: the disk wins the path,
        // the edit goes to a conflict copy.
        try "theirs\n".write(toFile: project.url("notes.txt"), atomically: false, encoding: .utf8)
        _ = try await agent.stderrLines.first(timeout: .seconds(30), "the conflict") { $0.contains(" conflict path=notes.txt") }
        #expect(try await client(["sync"], in: project).status == 0)

        let listed = try await client(["history", "notes.txt", "--json"], in: project)
        let versions = try #require(try JSONSerialization.jsonObject(with: Data(listed.stdout.utf8)) as? [[String: Any]])
        #expect(versions.map { $0["kind"] as? String } == ["conflict-copy", "modified", "baseline"])
        let copy = try #require(versions.first)
        #expect(copy["parent"] as? Int == versions.last?["version"] as? Int, "linked to the version the edit was made on")
        #expect((copy["from"] as? String)?.hasPrefix(".autosave/conflicts/notes.txt.") == true)
        let text = try await client(["history", "notes.txt"], in: project)
        #expect(text.stdout.contains("conflict-copy of \(versions.last?["version"] as? Int ?? 0) from .autosave/conflicts/notes.txt."), "\(text.stdout)")
        #expect(try await client(["show", "notes.txt@-0"], in: project).stdout == "theirs", "-N counts what the file held")

        let id = try #require(copy["version"] as? Int)
        let restored = try await client(["restore", "notes.txt@\(id)"], in: project)
        #expect(restored.status == 0, "\(restored.stderr)")
        #expect(try await client(["save", "notes.txt"], in: project).status == 0)
        #expect(try String(contentsOfFile: project.url("notes.txt"), encoding: .utf8) == "mine\n", "the lost edit is back")
        agent.signal(SIGTERM)
        #expect(await agent.exitStatus() == 0)
    }

    @Test func sedInPlaceOverAFileNoOneOpenedIsUndoneFromTheBaseline() async throws {
        let project = try TemporaryDirectory()
        try project.write("config/app.ini", "port = 8080\nhost = example.org\n")
        try project.write("notes.txt", "untouched\n")
        let agent = try await AgentProcess.started(on: project)
        _ = try await agent.stderrLines.first(timeout: .seconds(30), "history-baseline state=done") {
            $0.contains("history-baseline") && $0.contains("state=done")
        }
        // A coding agent's `sed -i` through a shell, on a file no buffer ever held.
        try runTool("/bin/sed", ["-i", "s/8080/9090/", project.url("config/app.ini")])
        #expect(try await client(["sync"], in: project).status == 0)
        let shown = try await client(["show", "config/app.ini@-1"], in: project)
        #expect(shown.status == 0, "\(shown.stderr)")
        #expect(shown.stdout == "port = 8080\nhost = example.org", "the version before sed, from the baseline")
        let listed = try await client(["history", "config/app.ini", "--json"], in: project)
        let versions = try #require(try JSONSerialization.jsonObject(with: Data(listed.stdout.utf8)) as? [[String: Any]])
        #expect(versions.map { $0["kind"] as? String } == ["modified", "baseline"])
        agent.signal(SIGTERM)
        #expect(await agent.exitStatus() == 0)
    }

    @Test func rmDashRfOfTheWrongFolderIsBroughtBackWithRestoreDeleted() async throws {
        let project = try TemporaryDirectory()
        try project.write("src/main.c", "int main(void) { return 0; }\n")
        try project.write("src/lib/util.c", "int util(void) { return 1; }\n")
        try project.write("keep/other.txt", "other\n")
        let agent = try await AgentProcess.started(on: project)
        _ = try await agent.stderrLines.first(timeout: .seconds(30), "history-baseline state=done") {
            $0.contains("history-baseline") && $0.contains("state=done")
        }
        try runTool("/bin/rm", ["-rf", project.url("src")])
        #expect(try await client(["sync"], in: project).status == 0)
        let listed = try await client(["history", "--deleted", "src"], in: project)
        #expect(listed.stdout.contains("src/main.c") && listed.stdout.contains("src/lib/util.c"), "\(listed.stdout)\(listed.stderr)")

        // The root named as `.` is the whole tree, as no path is.
        let everywhere = try await client(["history", "--deleted", "."], in: project)
        #expect(everywhere.status == 0 && everywhere.stdout.contains("src/main.c"), "\(everywhere.stdout)\(everywhere.stderr)")
        let restored = try await client(["restore", "--deleted", "src/"], in: project)
        #expect(restored.status == 0, "\(restored.stderr)")
        #expect(restored.stdout.split(separator: "\n").count == 2, "one line per file brought back: \(restored.stdout)")
        #expect(try await client(["sync"], in: project).status == 0)
        #expect(try await client(["save", "src/main.c", "src/lib/util.c"], in: project).status == 0)
        #expect(try String(contentsOfFile: project.url("src/main.c"), encoding: .utf8) == "int main(void) { return 0; }\n")
        #expect(try String(contentsOfFile: project.url("src/lib/util.c"), encoding: .utf8) == "int util(void) { return 1; }\n")
        #expect(try String(contentsOfFile: project.url("keep/other.txt"), encoding: .utf8) == "other\n")

        let again = try await client(["restore", "--deleted", "src"], in: project)
        #expect(again.status == 1, "nothing removed below src any more")
        #expect(again.stderr.contains("nothing to bring back"), "\(again.stderr)")
        let both = try await client(["restore", "src/main.c@-1", "--deleted", "src"], in: project)
        #expect(both.status == 2, "PATH@V and --deleted together is a usage error")
        agent.signal(SIGTERM)
        #expect(await agent.exitStatus() == 0)
    }

    @Test func anAcknowledgedSavesVersionSurvivesKillDashNine() async throws {
        let project = try TemporaryDirectory()
        let agent = try await AgentProcess.started(on: project)
        for round in 1...5 {
            #expect(try await client(["write", "a.txt"], in: project, stdin: "version \(round)\n").status == 0)
            #expect(try await client(["save", "a.txt"], in: project).status == 0)
        }
        agent.signal(SIGKILL)
        _ = await agent.exitStatus()
        let again = try await AgentProcess.started(on: project)
        let shown = try await client(["show", "a.txt@-0"], in: project)
        #expect(shown.stdout == "version 5", "the last acknowledged save's version: \(shown.stdout)\(shown.stderr)")
        let listed = try await client(["history", "a.txt", "--json"], in: project)
        let versions = try #require(try JSONSerialization.jsonObject(with: Data(listed.stdout.utf8)) as? [[String: Any]])
        #expect(versions.filter { $0["kind"] as? String == "saved" }.count == 5)
        again.signal(SIGTERM)
        #expect(await again.exitStatus() == 0)
    }

    @Test func aChangeByAWriterSeenHoldingTheFileNamesItsProgramAndPid() async throws {
        let project = try TemporaryDirectory()
        try project.write("app.log", "start\n")
        // The window waits up to 10 s for the writer; it holds the file 1.5 s, long past the 50 ms
        // settle window, however late a loaded machine gets to look.
        let agent = try await AgentProcess.started(on: project, config: #"{"watch": {"maxSettleMs": 10000}}"#)
        // A slow writer (a logger, a long build step) holds the file open across the settle
        // window: the agent waits for it to close, and sees who it is meanwhile.
        let writer = try AgentProcess(
            ["-c", "exec 3>>app.log; echo one >&3; sleep 1.5; echo two >&3"], executable: "/bin/sh", in: project.path)
        let status = await writer.exitStatus()
        #expect(status == 0)
        #expect(try await client(["sync"], in: project).status == 0)
        let listed = try await client(["history", "app.log", "--json", "--limit", "1"], in: project)
        let latest = try #require((try JSONSerialization.jsonObject(with: Data(listed.stdout.utf8)) as? [[String: Any]])?.first)
        #expect(latest["kind"] as? String == "modified")
        #expect(latest["program"] as? String == "sh", "\(latest)")
        #expect(latest["pid"] as? Int == Int(writer.processIdentifier), "\(latest)")
        let line = try await client(["history", "app.log", "--limit", "1"], in: project)
        #expect(line.stdout.contains("external (sh \(writer.processIdentifier))"), "\(line.stdout)")
        agent.signal(SIGTERM)
        #expect(await agent.exitStatus() == 0)
    }

    /// The adversary's case: where a removed folder was, a link out of the root now stands. The
    /// file below it is not written through the link, and the others still come back.
    @Test func restoreDeletedBringsBackWhatItCanAndNamesWhatALinkBlocks() async throws {
        let project = try TemporaryDirectory()
        let outside = try TemporaryDirectory()
        try project.write("src/a.txt", "a\n")
        try project.write("src/sub/b.txt", "b\n")
        let agent = try await AgentProcess.started(on: project)
        _ = try await agent.stderrLines.first(timeout: .seconds(30), "history-baseline state=done") {
            $0.contains("history-baseline") && $0.contains("state=done")
        }
        try runTool("/bin/rm", ["-rf", project.url("src/sub"), project.url("src/a.txt")])
        #expect(try await client(["sync"], in: project).status == 0)
        try FileManager.default.createSymbolicLink(atPath: project.url("src/sub"), withDestinationPath: outside.path)
        #expect(try await client(["sync"], in: project).status == 0)

        let restored = try await client(["restore", "--deleted", "src"], in: project)
        #expect(restored.status == 1, "one file could not come back: \(restored.stdout)\(restored.stderr)")
        #expect(restored.stdout.contains("src/a.txt"))
        #expect(restored.stderr.contains("not brought back: src/sub/b.txt"), "\(restored.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: outside.path).isEmpty, "nothing written through the link")
        #expect(try await client(["save", "src/a.txt"], in: project).status == 0)
        #expect(try String(contentsOfFile: project.url("src/a.txt"), encoding: .utf8) == "a\n")
        agent.signal(SIGTERM)
        #expect(await agent.exitStatus() == 0)
    }

    @Test func aRemovedFileIsListedAndBroughtBack() async throws {
        let project = try TemporaryDirectory()
        try project.write("src/keep.txt", "keep\n")
        let agent = try await AgentProcess.started(on: project)
        #expect(try await client(["write", "src/gone.txt"], in: project, stdin: "precious\n").status == 0)
        #expect(try await client(["save", "src/gone.txt"], in: project).status == 0)
        try FileManager.default.removeItem(atPath: project.url("src/gone.txt"))
        #expect(try await client(["sync"], in: project).status == 0)
        let deleted = try await client(["history", "--deleted", "src"], in: project)
        #expect(deleted.stdout.contains("removed"), "\(deleted.stdout)\(deleted.stderr)")
        #expect(deleted.stdout.contains("src/gone.txt"))
        #expect(try await client(["restore", "src/gone.txt@-0"], in: project).status == 0)
        #expect(try await client(["save", "src/gone.txt"], in: project).status == 0)
        #expect(try String(contentsOfFile: project.url("src/gone.txt"), encoding: .utf8) == "precious\n")
        agent.signal(SIGTERM)
        #expect(await agent.exitStatus() == 0)
    }

    @Test func badVersionsAndMissingHistoryAreClearErrors() async throws {
        let project = try TemporaryDirectory()
        try project.write("a.txt", "a\n")
        let agent = try await AgentProcess.started(on: project)
        let usage = try await client(["show", "a.txt"], in: project)
        #expect(usage.status == 2, "PATH without @V is a usage error")
        let none = try await client(["show", "never.txt@-1"], in: project)
        #expect(none.status == 1)
        #expect(none.stderr.contains("history has no version of never.txt"), "\(none.stderr)")
        #expect(try await client(["open", "a.txt"], in: project).status == 0)
        let beyond = try await client(["show", "a.txt@-5"], in: project)
        #expect(beyond.status == 1)
        #expect(beyond.stderr.contains("a.txt has no version -5 (it has 1"), "\(beyond.stderr)")
        agent.signal(SIGTERM)
        #expect(await agent.exitStatus() == 0)
    }
}
