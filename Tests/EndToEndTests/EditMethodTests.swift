import AutosaveTestKit
import Foundation
import Testing

/// The socket's `edit` method as an editor's client sends it: LSP ranges in the encoding it
/// counts in, several edits as one revision, and a clear refusal that changes nothing.
@Suite struct EditMethodTests {
    @Test func rangedEditsApplyAsOneRevisionAndBadOnesChangeNothing() async throws {
        let project = try TemporaryDirectory()
        let agent = try await AgentProcess.started(on: project, config: #"{"autosave": {"delayMs": 60000, "maxDelayMs": 60000}}"#)
        func request(_ id: Int, _ method: String, _ params: String) -> String {
            #"{"jsonrpc":"2.0","id":\#(id),"method":"\#(method)","params":{"path":"a.txt"\#(params.isEmpty ? "" : "," + params)}}"#
        }
        let answers = try SocketScript.run(socket: project.url(".autosave/agent.sock"), lines: [
            request(1, "write", #""content":"h😀llo\nwörld\n""#),
            // UTF-16 (the default): 😀 is two units; "wörld" is five.
            request(2, "edit", #""edits":[{"start":{"line":1,"character":0},"end":{"line":1,"character":5},"text":"world"},{"start":{"line":0,"character":3},"end":{"line":0,"character":3},"text":"e"}]"#),
            // LSP's own TextEdit shape, counting bytes.
            request(3, "edit", #""positionEncoding":"utf-8","edits":[{"range":{"start":{"line":2,"character":0},"end":{"line":2,"character":0}},"newText":"end\n"}]"#),
            request(4, "edit", #""edits":[{"start":{"line":0,"character":0},"end":{"line":0,"character":4},"text":"a"},{"start":{"line":0,"character":3},"end":{"line":1,"character":0},"text":"b"}]"#),
            request(5, "edit", #""edits":[{"start":{"line":0,"character":99},"end":{"line":0,"character":99},"text":"x"}]"#),
            request(6, "edit", #""edits":[{"start":{"line":0,"character":2},"end":{"line":0,"character":2},"text":"x"}]"#),
            request(7, "edit", #""positionEncoding":"utf-7","edits":[]"#),
            request(8, "edit", #""ifRevision":1,"edits":[{"start":{"line":0,"character":0},"end":{"line":0,"character":0},"text":"x"}]"#),
            request(9, "read", ""),
            request(10, "open", #""keep":"mine""#),
            request(11, "open", #""keep":"buffer""#),
        ])
        #expect(answers.count == 11, "\(answers)")
        #expect(answers[9].contains(#"`keep` must be one of \"disk\", \"buffer\" or null (the configuration's), got \"mine\""#), "\(answers[9])")
        #expect(answers[10].contains(#""revision":3"#), "\(answers[10])")
        #expect(answers[1].contains(#""revision":2"#), "two edits, one revision")
        #expect(answers[2].contains(#""revision":3"#))
        #expect(answers[3].contains(#""code":-32602"#) && answers[3].contains("edits 0 (0:0-0:4) and 1 (0:3-1:0) overlap"))
        #expect(answers[3].contains(#""edits":[0,1]"#))
        #expect(answers[4].contains(#""code":-32602"#), "\(answers[4])")
        #expect(answers[4].contains("edit 0: character 99 is past the end of line 0, which is 7 UTF-16 code units long"), "\(answers[4])")
        #expect(answers[5].contains("edit 0: 0:2 falls inside a character (counting UTF-16 code units)"))
        #expect(answers[6].contains(#"`positionEncoding` must be one of \"utf-8\", \"utf-16\", \"utf-32\", got \"utf-7\""#))
        #expect(answers[7].contains("is at revision 3, not 1"))
        #expect(answers[8].contains(#""content":"h😀ello\nworld\nend\n""#), "\(answers[8])")
        #expect(answers[8].contains(#""revision":3"#), "the refused edits changed nothing")
        agent.signal(SIGTERM)
        #expect(await agent.exitStatus() == 0)
        #expect(try project.read("a.txt") == "h😀ello\nworld\nend\n", "saved on the way out")
    }

    /// Keystrokes in a large clean file: the journal grows by what they change (the file itself is
    /// pinned, not copied), and `kill -9` loses none of them.
    @Test func keystrokesInALargeFileCostLittleJournalAndSurviveKillDashNine() async throws {
        let project = try TemporaryDirectory()
        let line = "a line of a large file, long enough to matter\n"
        try project.write("big.txt", String(repeating: line, count: 25_000))
        let agent = try await AgentProcess.started(on: project, config: #"{"autosave": {"delayMs": 60000, "maxDelayMs": 60000}}"#)
        let journal = project.url(".autosave/journal/journal.log")
        // Each keystroke types one letter at the start of a line further down, as its own request.
        let keystrokes = (0..<200).map { index in
            #"{"jsonrpc":"2.0","id":\#(index),"method":"edit","params":{"path":"big.txt","positionEncoding":"utf-8","edits":[{"start":{"line":\#(index * 50),"character":0},"end":{"line":\#(index * 50),"character":0},"text":"k"}]}}"#
        }
        let answers = try SocketScript.run(socket: project.url(".autosave/agent.sock"), lines: keystrokes)
        #expect(answers.count == 200 && answers.allSatisfy { $0.contains(#""result""#) }, "\(answers.prefix(2))")
        let journalBytes = try FileManager.default.attributesOfItem(atPath: journal)[.size] as? Int ?? 0
        let fileBytes = line.utf8.count * 25_000
        // The file on disk is pinned, not copied: the journal holds 200 keystrokes' worth.
        #expect(journalBytes < 200 * 200, "bytes per keystroke and no copy of the file: \(journalBytes) for a \(fileBytes)-byte file")
        agent.signal(SIGKILL)
        _ = await agent.exitStatus()
        let restarted = try AgentProcess(["run", project.path])
        _ = try await restarted.stderrLines.first(timeout: .seconds(30), "recovered") { $0.contains(" recovered path=big.txt revision=200") }
        restarted.signal(SIGTERM)
        #expect(await restarted.exitStatus() == 0)
        let expected = (0..<25_000).map { $0 % 50 == 0 && $0 / 50 < 200 ? "k" + line : line }.joined()
        #expect(try project.read("big.txt") == expected, "every keystroke is in the file")
    }
}
