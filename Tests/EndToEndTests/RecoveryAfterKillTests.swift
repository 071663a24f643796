import AutosaveTestKit
import Foundation
import Testing

/// `kill -9`, something done to the files while the agent is down, a restart: every edit a client
/// was told is accepted comes back whole, once, and without a conflict copy it does not need.
@Suite struct RecoveryAfterKillTests {
    static let line = "a line of a large file, long enough to matter\n"
    /// 1.7 MB: past the size from which keystrokes stand on a pinned copy of the clean file.
    static let lineCount = 37_000
    static let quiet = #"{"autosave": {"delayMs": 60000, "maxDelayMs": 60000}}"#

    static func request(_ id: Int, _ method: String, _ params: String) -> String {
        #"{"jsonrpc":"2.0","id":\#(id),"method":"\#(method)","params":{\#(params)}}"#
    }

    /// A one-letter insertion at the start of `line` of `path`.
    static func keystroke(_ id: Int, _ path: String, line: Int, _ letter: String, changeID: UUID? = nil) -> String {
        let change = changeID.map { #","changeId":"\#($0.uuidString)""# } ?? ""
        return request(
            id, "edit",
            #""path":"\#(path)","positionEncoding":"utf-8","edits":[{"start":{"line":\#(line),"character":0},"end":{"line":\#(line),"character":0},"text":"\#(letter)"}]\#(change)"#)
    }

    /// The bytes of every conflict copy the agent kept.
    static func conflictCopies(_ project: TemporaryDirectory) -> [String] {
        let folder = project.url(".autosave/conflicts")
        let names = (FileManager.default.enumerator(atPath: folder)?.allObjects as? [String]) ?? []
        return names.compactMap { name in
            var isFolder: ObjCBool = false
            guard FileManager.default.fileExists(atPath: folder + "/" + name, isDirectory: &isFolder), !isFolder.boolValue else { return nil }
            return try? String(contentsOfFile: folder + "/" + name, encoding: .utf8)
        }
    }

    static func restart(_ project: TemporaryDirectory) async throws -> AgentProcess {
        let agent = try AgentProcess(["run", project.path])
        _ = try await agent.stderrLines.first(timeout: .seconds(60), "ready") { $0.contains(" ready ") }
        return agent
    }

    /// Issue 33, item 1: five keystrokes into a 1.7 MB file, `kill -9`, then the file appended
    /// to, rewritten in place, truncated, replaced, removed or left alone before the restart.
    /// The keystrokes stood on a hard link to the file, which every in-place write changed: the
    /// restart logged `journal-corrupt` and they were in neither the file nor a copy.
    @Test(arguments: OutsideWrite.allCases)
    func keystrokesInALargeFileSurviveWhateverHappensToItWhileTheAgentIsDown(_ change: OutsideWrite) async throws {
        let project = try TemporaryDirectory()
        try project.write("big.txt", String(repeating: Self.line, count: Self.lineCount))
        let agent = try await AgentProcess.started(on: project, config: Self.quiet)
        let keystrokes = (0..<5).map { Self.keystroke($0, "big.txt", line: $0 * 1000, "k") }
        let answers = try SocketScript.run(socket: project.url(".autosave/agent.sock"), lines: keystrokes)
        #expect(answers.count == 5 && answers.allSatisfy { $0.contains(#""result""#) }, "\(answers)")
        agent.signal(SIGKILL)
        _ = await agent.exitStatus()
        try change.apply(to: project.url("big.txt"))
        let restarted = try await Self.restart(project)
        restarted.signal(SIGTERM)
        #expect(await restarted.exitStatus() == 0)
        let corrupt = restarted.stderrLines.elements.filter { $0.contains("journal-corrupt") }
        #expect(corrupt.isEmpty, "\(corrupt)")
        let typed = (0..<Self.lineCount).map { $0 % 1000 == 0 && $0 < 5000 ? "k" + Self.line : Self.line }.joined()
        let onDisk = try? project.read("big.txt")
        #expect(onDisk == typed || Self.conflictCopies(project).contains(typed),
            "after \(change): the keystrokes are neither in the file nor in a conflict copy")
    }

    /// Issue 33, item 2: an edit acknowledged, then sent again with the same `changeId` after
    /// `kill -9` and a restart (a careful client that never saw the answer): it is applied once,
    /// whether it was saved before the kill or was still only in the journal. The ids lived in the
    /// buffer only, and `hello` became `XXhello`.
    @Test(arguments: [false, true])
    func anEditRetriedWithItsChangeIdAfterKillDashNineIsAppliedOnce(savedBeforeTheKill: Bool) async throws {
        let project = try TemporaryDirectory()
        try project.write("a.txt", "hello\n")
        let agent = try await AgentProcess.started(on: project, config: Self.quiet)
        let id = UUID()
        var lines = [Self.keystroke(1, "a.txt", line: 0, "X", changeID: id)]
        if savedBeforeTheKill { lines.append(Self.request(2, "save", #""paths":["a.txt"]"#)) }
        let answers = try SocketScript.run(socket: project.url(".autosave/agent.sock"), lines: lines)
        #expect(answers.count == lines.count && answers.allSatisfy { $0.contains(#""result""#) }, "\(answers)")
        #expect(try project.read("a.txt") == (savedBeforeTheKill ? "Xhello\n" : "hello\n"))
        agent.signal(SIGKILL)
        _ = await agent.exitStatus()
        let restarted = try await Self.restart(project)
        let retried = try SocketScript.run(
            socket: project.url(".autosave/agent.sock"),
            lines: [Self.keystroke(3, "a.txt", line: 0, "X", changeID: id), Self.request(4, "read", #""path":"a.txt""#)])
        #expect(retried.first?.contains(#""result""#) == true, "\(retried)")
        #expect(retried.last?.contains(#""content":"Xhello\n""#) == true, "applied once: \(retried.last ?? "no answer")")
        restarted.signal(SIGTERM)
        #expect(await restarted.exitStatus() == 0)
        #expect(try project.read("a.txt") == "Xhello\n")
    }
}
