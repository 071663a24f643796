@testable import AutosaveKit
import AutosaveHistory
import Testing

/// `UndoPlan` on histories written out by hand: one writer's changes taken back, everyone
/// else's kept, and a collision named instead of a half-undone file.
@Suite struct UndoPlanTests {
    /// A history of one file: (who, kind, text or nil for no file), oldest first, a minute apart.
    func history(_ steps: [(String, VersionKind, String?)]) -> [UndoPlan.Entry] {
        steps.enumerated().map { index, step in
            UndoPlan.Entry(
                version: Version(
                    id: Int64(index + 1), path: "a.py", time: Int64(index) * 60_000, who: step.0, kind: step.1,
                    size: step.2?.utf8.count, digest: nil),
                content: step.2.map { Array($0.utf8) })
        }
    }

    func plan(_ steps: [(String, VersionKind, String?)], now: String?, who: String, since: Int64? = nil) throws -> UndoPlan {
        UndoPlan(history: history(steps), current: now.map { Array($0.utf8) }, writer: try WriterPattern(who), since: since)
    }

    @Test func theAgentsLinesGoAndThePersonsStay() throws {
        let plan = try plan(
            [
                ("external", .baseline, "1\n2\n3\n4\n5\n6\n"),
                ("mcp:claude", .saved, "1\n2\n3\n4\n5\nagent\n"),
                ("nvim:41", .saved, "person\n2\n3\n4\n5\nagent\n"),
            ], now: "person\n2\n3\n4\n5\nagent\n", who: "mcp:claude")
        #expect(plan.outcome == .write(Array("person\n2\n3\n4\n5\n6\n".utf8)))
        #expect(plan.undone == [2])
    }

    @Test func aCollisionChangesNothingAndHandsOverTheFileBeforeTheWritersChange() throws {
        let plan = try plan(
            [("external", .baseline, "a\nb\n"), ("mcp:claude", .saved, "a\nAGENT\n"), ("nvim:41", .saved, "a\nAGENT, fixed by hand\n")],
            now: "a\nAGENT, fixed by hand\n", who: "mcp:claude")
        #expect(plan.outcome == .collision(undone: Array("a\nb\n".utf8)))
    }

    @Test func aFileTheWriterMadeGoesUnlessSomeoneChangedItSince() throws {
        let made = try plan([("mcp:claude", .saved, "new\n")], now: "new\n", who: "mcp")
        #expect(made.outcome == .remove, "`mcp` covers every MCP client")
        let changed = try plan([("mcp:claude", .saved, "new\n"), ("cli", .saved, "new, kept\n")], now: "new, kept\n", who: "mcp:claude")
        #expect(changed.outcome == .collision(undone: nil))
    }

    @Test func aFileTheWriterRemovedComesBack() throws {
        let plan = try plan([("external", .baseline, "kept\n"), ("external", .removed, nil)], now: nil, who: "external")
        #expect(plan.outcome == .write(Array("kept\n".utf8)))
    }

    @Test func onlyTheWindowAndOnlyTheWriterAlone() throws {
        let steps: [(String, VersionKind, String?)] = [
            ("external", .baseline, "1\n2\n3\n"), ("mcp:claude", .saved, "one\n2\n3\n"), ("cli,mcp:claude", .saved, "one\n2\nthree\n"),
            ("mcp:claude", .saved, "one\ntwo\nthree\n"),
        ]
        let recent = try plan(steps, now: "one\ntwo\nthree\n", who: "mcp:claude", since: 120_000)
        #expect(recent.outcome == .write(Array("one\n2\nthree\n".utf8)), "only the change after the window opened")
        let all = try plan(steps, now: "one\ntwo\nthree\n", who: "mcp:claude")
        #expect(all.outcome == .write(Array("1\n2\nthree\n".utf8)), "the shared save is left, the others taken back")
        #expect(all.skipped.map(\.id) == [3])
    }

    @Test func aMoveGoesBackWhenNothingChangedTheFileSinceAndStaysWhenSomethingDid() throws {
        var entries = history([("external", .baseline, "x\n"), ("external", .moved, "x\n")])
        entries[1].version.from = "old.py"
        let plan = UndoPlan(history: entries, current: Array("x\n".utf8), writer: try WriterPattern("external"), since: nil)
        #expect(plan.movesBackTo == "old.py")
        #expect(plan.outcome == .write(Array("x\n".utf8)), "the bytes for the old name")
        let changed = UndoPlan(history: entries, current: Array("x, edited\n".utf8), writer: try WriterPattern("external"), since: nil)
        #expect(changed.movesBackTo == nil && changed.outcome == .unchanged && changed.skipped.map(\.id) == [2])
    }

    @Test func anOutsideProgramIsNamedByWhatTheAgentSawWriting() throws {
        var entries = history([("external", .baseline, "x\n"), ("external", .modified, "y\n")])
        entries[1].version.program = "sed"
        let bySed = UndoPlan(history: entries, current: Array("y\n".utf8), writer: try WriterPattern("external:sed"), since: nil)
        #expect(bySed.outcome == .write(Array("x\n".utf8)))
        let byVim = UndoPlan(history: entries, current: Array("y\n".utf8), writer: try WriterPattern("external:vim"), since: nil)
        #expect(byVim.outcome == .unchanged)
        #expect(throws: UndoError.badWriter("cli,nvim")) { try WriterPattern("cli,nvim") }
    }
}
