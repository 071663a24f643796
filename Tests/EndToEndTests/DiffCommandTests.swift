import AutosaveTestKit
import Foundation
import Glibc
import Testing

/// `autosave diff`, and versions named by time, as a user runs them: the diff GNU `patch` applies
/// to version A gives version B byte for byte; against the file now it shows unsaved edits; its
/// exit status is diff's.
@Suite struct DiffCommandTests {
    func client(
        _ arguments: [String], in project: TemporaryDirectory, stdin: String? = nil
    ) async throws -> (status: Int32, stdout: String, stderr: String) {
        try await AgentProcess.client(arguments, in: project, stdin: stdin)
    }

    /// Runs `autosave ARGUMENTS > output` in the project through a shell, so the output is kept
    /// byte for byte (the line-splitting helper drops the last line break); `environment` is
    /// prefixed as `NAME=value`. Returns the exit status and the output's bytes.
    func exactOutput(
        _ arguments: [String], in project: TemporaryDirectory, scratch: TemporaryDirectory, environment: String = ""
    ) async throws -> (status: Int32, output: [UInt8], stderr: String) {
        let output = scratch.url("output-\(UUID().uuidString)")
        let script = "out=$1; shift; \(environment) \"$0\" \"$@\" > \"$out\""
        let run = try await AgentProcess.run(
            ["-c", script, AgentProcess.binary, output] + arguments, executable: "/bin/sh", in: project.path)
        return (run.status, Array(try Data(contentsOf: URL(fileURLWithPath: output))), run.stderr)
    }

    func versions(_ path: String, in project: TemporaryDirectory) async throws -> [[String: Any]] {
        let listed = try await client(["history", path, "--json"], in: project)
        #expect(listed.status == 0, "\(listed.stderr)")
        return try #require(try JSONSerialization.jsonObject(with: Data(listed.stdout.utf8)) as? [[String: Any]])
    }

    @Test func theDiffBetweenTwoVersionsAppliesWithGNUPatch() async throws {
        let project = try TemporaryDirectory()
        let scratch = try TemporaryDirectory()
        let before = (1...40).map { "line \($0)\r\n" }.joined() + "last line without a break"
        var lines = (1...40).map { "line \($0)\r\n" }
        lines[4] = "line five, edited\r\n"
        lines.remove(at: 20)
        lines.insert("a new line\n", at: 30)
        let after = lines.joined() + "last line, now with a break\n"
        let agent = try await AgentProcess.started(on: project)
        #expect(try await client(["write", "notes.txt"], in: project, stdin: before).status == 0)
        #expect(try await client(["save", "notes.txt"], in: project).status == 0)
        #expect(try await client(["write", "notes.txt"], in: project, stdin: after).status == 0)
        #expect(try await client(["save", "notes.txt"], in: project).status == 0)

        let diff = try await exactOutput(["diff", "notes.txt@-1", "notes.txt@-0"], in: project, scratch: scratch)
        #expect(diff.status == 1, "different: 1, as diff says. \(diff.stderr)")
        let text = String(decoding: diff.output, as: UTF8.self)
        let ids = try await versions("notes.txt", in: project).compactMap { $0["version"] as? Int }
        #expect(text.hasPrefix("--- notes.txt@\(ids[1])\t"), "\(text)")
        #expect(text.contains("\n+++ notes.txt@\(ids[0])\t"), "\(text)")
        #expect(text.contains("\n@@ -2,7 +2,7 @@\n"), "three lines of context around the first change: \(text)")
        #expect(!text.contains("\u{1B}["), "no colour into a pipe")

        try Data(before.utf8).write(to: URL(fileURLWithPath: scratch.url("old.txt")))
        try Data(diff.output).write(to: URL(fileURLWithPath: scratch.url("notes.diff")))
        let patched = try await AgentProcess.run(
            ["-s", "-o", scratch.url("new.txt"), scratch.url("old.txt"), scratch.url("notes.diff")],
            executable: "/usr/bin/patch")
        #expect(patched.status == 0, "\(patched.stdout) \(patched.stderr)")
        #expect(
            try Data(contentsOf: URL(fileURLWithPath: scratch.url("new.txt"))) == Data(after.utf8),
            "patch turns version A into version B")

        let same = try await client(["diff", "notes.txt@-0", "notes.txt@\(ids[0])"], in: project)
        #expect(same.status == 0 && same.stdout.isEmpty, "the same version twice: no output, status 0")
        agent.signal(SIGTERM)
        #expect(await agent.exitStatus() == 0)
    }

    /// Edits stay unsaved for the whole test, however slow the machine: the diff compares a
    /// version with a buffer that differs from it.
    static let unsavedForAnHour = #"{"autosave": {"delayMs": 3600000, "maxDelayMs": 3600000}}"#

    @Test func withOneVersionItComparesWithTheBufferAsTheAgentServesItNow() async throws {
        let project = try TemporaryDirectory()
        let scratch = try TemporaryDirectory()
        try project.write("todo.txt", "milk\neggs\n")
        let agent = try await AgentProcess.started(on: project, config: Self.unsavedForAnHour)
        #expect(try await client(["open", "todo.txt"], in: project).status == 0)
        let unchanged = try await client(["diff", "todo.txt@-0"], in: project)
        #expect(unchanged.status == 0 && unchanged.stdout.isEmpty, "\(unchanged)")

        // An edit not yet saved: the disk still says milk and eggs.
        #expect(try await client(["write", "todo.txt"], in: project, stdin: "milk\nbread\neggs\n").status == 0)
        let diff = try await client(["diff", "todo.txt@-0"], in: project)
        #expect(diff.status == 1, "\(diff.stderr)")
        #expect(diff.stdout.contains("\n+++ todo.txt\t(now)\n"), "\(diff.stdout)")
        #expect(diff.stdout.hasSuffix("@@ -1,2 +1,3 @@\n milk\n+bread\n eggs"), "\(diff.stdout)")

        let coloured = try await exactOutput(
            ["diff", "todo.txt@-0", "--color", "always"], in: project, scratch: scratch)
        let text = String(decoding: coloured.output, as: UTF8.self)
        #expect(text.contains("\u{1B}[36m@@ -1,2 +1,3 @@\u{1B}[m\n"), "cyan hunk header: \(text.debugDescription)")
        #expect(text.contains("\u{1B}[32m+bread\u{1B}[m\n"), "green addition: \(text.debugDescription)")
        #expect(text.contains("\n eggs\n"), "context uncoloured")
        let never = try await exactOutput(["diff", "todo.txt@-0", "--color", "never"], in: project, scratch: scratch)
        #expect(!String(decoding: never.output, as: UTF8.self).contains("\u{1B}"))
        agent.signal(SIGTERM)
        #expect(await agent.exitStatus() == 0)
    }

    @Test func binaryVersionsAndTroubleAreSaidAsDiffSaysThem() async throws {
        let project = try TemporaryDirectory()
        let scratch = try TemporaryDirectory()
        try TemporaryDirectory.writeFile(project.url("image.bin"), [0x89, 0x50, 0, 1, 2])
        try project.write("a.txt", "a\n")
        let agent = try await AgentProcess.started(on: project, config: Self.unsavedForAnHour)
        #expect(try await client(["open", "image.bin"], in: project).status == 0)
        try TemporaryDirectory.writeFile(scratch.url("next.bin"), [0x89, 0x50, 0, 9, 9])
        #expect(try await client(["write", "image.bin", "--from", scratch.url("next.bin")], in: project).status == 0)
        let binary = try await client(["diff", "image.bin@-0"], in: project)
        #expect(binary.status == 1)
        #expect(
            binary.stdout.hasPrefix("Binary versions image.bin@") && binary.stdout.hasSuffix(" and image.bin differ"),
            "\(binary.stdout)")

        #expect(try await client(["open", "a.txt"], in: project).status == 0)
        let missing = try await client(["diff", "a.txt@-7"], in: project)
        #expect(missing.status == 2, "trouble is 2, as diff's")
        #expect(missing.stderr.contains("a.txt has no version -7"), "\(missing.stderr)")
        let garbage = try await client(["diff", "a.txt@yesterday"], in: project)
        #expect(garbage.status == 2)
        #expect(garbage.stderr.contains("`yesterday` is not a version"), "\(garbage.stderr)")
        agent.signal(SIGTERM)
        #expect(await agent.exitStatus() == 0)
    }

    @Test func aTimeNamesTheVersionTheFileHeldThenAndTheHistoryLineCountsLines() async throws {
        let project = try TemporaryDirectory()
        let scratch = try TemporaryDirectory()
        try project.write("plan.txt", "one\ntwo\n")
        let agent = try await AgentProcess.started(on: project)
        #expect(try await client(["open", "plan.txt"], in: project).status == 0)
        #expect(try await client(["write", "plan.txt"], in: project, stdin: "one\n2\nthree\n").status == 0)
        #expect(try await client(["save", "plan.txt"], in: project).status == 0)
        let listed = try await versions("plan.txt", in: project)
        #expect(listed.count == 2, "\(listed)")
        #expect(listed.first?["added"] as? Int == 2 && listed.first?["removed"] as? Int == 1, "\(listed)")
        #expect(listed.last?["added"] == nil, "a first version has nothing to count against")
        let line = try await client(["history", "plan.txt", "--limit", "1"], in: project)
        #expect(line.stdout.contains("  cli  saved  12 B  +2 -1  plan.txt"), "\(line.stdout)")

        // The moment of the first version, as JSON gives it (RFC 3339, UTC): the version then is the
        // latest at or before it, which is the first unless both were recorded in the same millisecond.
        let first = try #require(listed.last)
        let moment = try #require(first["timeMs"] as? Int)
        let expected = try #require(listed.first { ($0["timeMs"] as? Int ?? .max) <= moment }?["version"] as? Int)
        let utc = try #require(first["time"] as? String)
        let shown = try await exactOutput(["show", "plan.txt@\(utc)"], in: project, scratch: scratch)
        #expect(shown.status == 0, "\(shown.stderr)")
        let idAt = try await client(["show", "plan.txt@\(expected)"], in: project)
        #expect(String(decoding: shown.output, as: UTF8.self) == idAt.stdout + "\n")

        // The same moment in local time, in a zone five and a half hours east of UTC.
        var seconds = time_t(moment / 1000 + 19_800)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        let local = String(
            format: "%04d-%02d-%02dT%02d:%02d:%02d.%03d", parts.tm_year + 1900, parts.tm_mon + 1, parts.tm_mday,
            parts.tm_hour,
            parts.tm_min, parts.tm_sec, Int32(moment % 1000))
        let inZone = try await exactOutput(
            ["show", "plan.txt@\(local)"], in: project, scratch: scratch, environment: "TZ=IST-5:30")
        #expect(inZone.status == 0, "\(inZone.stderr)")
        #expect(inZone.output == shown.output, "a local time is read in the client's zone")

        let restored = try await client(["restore", "plan.txt@\(utc)"], in: project)
        #expect(restored.status == 0, "\(restored.stderr)")
        #expect(try await client(["cat", "plan.txt"], in: project).stdout == idAt.stdout, "restore takes a time too")

        let early = try await client(["show", "plan.txt@10 weeks ago"], in: project)
        #expect(early.status == 1)
        #expect(early.stderr.contains("plan.txt has no version as early as"), "\(early.stderr)")
        #expect(early.stderr.contains("history's earliest version of it is from"), "\(early.stderr)")
        let diff = try await client(
            ["diff", "plan.txt@\(utc)", "plan.txt@\(try #require(listed.first?["version"] as? Int))"], in: project)
        #expect(diff.stdout.contains("\n-two\n+2\n+three"), "\(diff.stdout)")
        agent.signal(SIGTERM)
        #expect(await agent.exitStatus() == 0)
    }
}
