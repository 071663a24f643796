@testable import AutosaveKit
import AutosaveTestKit
import Foundation
import Testing

/// A ranged edit is an edit like any other: merged with what tools change on disk, saved after
/// the window, journaled, applied once per change id, refused whole when it cannot be placed.
@Suite struct RangedEditWorkspaceTests {
    func insert(_ text: String, line: Int, character: Int) -> TextEdit {
        let at = TextPosition(line: line, character: character)
        return TextEdit(range: TextRange(start: at, end: at), text: Array(text.utf8))
    }

    @Test func aRangedEditMergesWithAnExternalChangeAndIsSaved() async throws {
        let harness = try await WorkspaceHarness(files: ["a.txt": "one\ntwo\nthree\n"])
        let id = UUID()
        let edited = try await harness.workspace.acceptEdits("a.txt", [insert("ONE ", line: 0, character: 0)], encoding: .utf16, changeID: id)
        try await edited.waitUntilDurable()
        #expect(edited.revision == 1)
        // The same change id again (a client's retry) is not applied twice.
        let again = try await harness.workspace.acceptEdits("a.txt", [insert("ONE ", line: 0, character: 0)], encoding: .utf16, changeID: id)
        #expect(again.revision == 1)
        try runTool("/bin/sed", ["-i", "s/three/THREE/", harness.project.url("a.txt")])
        await harness.settleExternalChanges()
        #expect(try await harness.text("a.txt") == "ONE one\ntwo\nTHREE\n")
        try await harness.advance(by: harness.delay)
        _ = try await harness.logs.first(timeout: .seconds(20), "saved") { $0.event == "saved" }
        #expect(try harness.project.read("a.txt") == "ONE one\ntwo\nTHREE\n")
        await harness.stop()
    }

    @Test func aRefusedEditChangesNothing() async throws {
        let harness = try await WorkspaceHarness(files: ["a.txt": "one\n"])
        await #expect(throws: WorkspaceError.invalidEdit(path: "a.txt", .noSuchLine(edit: 1, TextPosition(line: 5, character: 0), lineCount: 2))) {
            _ = try await harness.workspace.acceptEdits(
                "a.txt", [insert("x", line: 0, character: 0), insert("y", line: 5, character: 0)], encoding: .utf8)
        }
        await #expect(throws: WorkspaceError.staleRevision(path: "a.txt", expected: 3, current: 0)) {
            _ = try await harness.workspace.acceptEdits("a.txt", [insert("x", line: 0, character: 0)], encoding: .utf8, ifRevision: 3)
        }
        await #expect(throws: WorkspaceError.invalidEdit(path: "gone.txt", .noText)) {
            _ = try await harness.workspace.acceptEdits("gone.txt", [insert("x", line: 0, character: 0)], encoding: .utf8)
        }
        #expect(try await harness.workspace.read("a.txt").revision == 0)
        #expect(try await harness.text("a.txt") == "one\n")
        #expect(await harness.workspace.status().map(\.path) == ["a.txt"], "no buffer is left open for gone.txt (a.txt was read)")
        await harness.stop()
    }
}

/// A patch changes every file it names or none, and deletes only the file it was made from.
@Suite struct PatchWorkspaceTests {
    @Test func aPatchWhoseSecondFileDoesNotFitChangesNeither() async throws {
        let harness = try await WorkspaceHarness(files: ["a.txt": "one\ntwo\n", "b.txt": "x\ny\n"])
        let patch = "--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n-one\n+ONE\n two\n--- a/b.txt\n+++ b/b.txt\n@@ -1,2 +1,2 @@\n x\n-z\n+Z\n"
        await #expect(throws: WorkspaceError.patchRefused(.hunkDoesNotApply(path: "b.txt", hunk: "@@ -1,2 +1,2 @@", line: 2, expected: "z", found: "y"))) {
            _ = try await harness.workspace.applyPatch(Array(patch.utf8))
        }
        #expect(try await harness.text("a.txt") == "one\ntwo\n")
        #expect(await harness.workspace.status().allSatisfy { !$0.isDirty })
        await harness.stop()
    }

    /// A patch of a large clean file, from a diff of that very text: checked hunk by hunk on the
    /// rope, and journaled as its splices on the pinned file, not as the file.
    @Test func aPatchOfALargeCleanFileCostsTheJournalItsHunks() async throws {
        let lines = (0..<50_000).map { "line \($0) of a large file\n" }
        let harness = try await WorkspaceHarness(files: ["big.txt": lines.joined()])
        var patch = "--- a/big.txt\n+++ b/big.txt\n"
        var expected = lines
        for hunk in 0..<20 {
            let at = hunk * 2_400 + 100
            patch += "@@ -\(at + 1),3 +\(at + 1),3 @@\n \(lines[at])-\(lines[at + 1])+changed \(hunk)\n \(lines[at + 2])"
            expected[at + 1] = "changed \(hunk)\n"
        }
        let patched = try await harness.workspace.applyPatch(Array(patch.utf8))
        #expect(patched.map(\.revision) == [1])
        #expect(try await harness.text("big.txt") == expected.joined())
        let journal = harness.project.path + "/.autosave/journal/journal.log"
        let size = try #require(try FileManager.default.attributesOfItem(atPath: journal)[.size] as? Int)
        #expect(size < 4_096, "a 20-hunk patch of \(lines.joined().utf8.count) bytes cost the journal \(size) bytes")
        await harness.stop()
    }

    @Test func aDeletionMustRemoveAllOfTheFile() async throws {
        let harness = try await WorkspaceHarness(files: ["x.txt": "foo\nbar\nbaz\n"])
        let partial = "--- a/x.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-foo\n"
        await #expect(throws: WorkspaceError.patchRefused(.deletionLeavesText(path: "x.txt", bytes: 8))) {
            _ = try await harness.workspace.applyPatch(Array(partial.utf8))
        }
        await #expect(throws: WorkspaceError.patchRefused(.deletionLeavesText(path: "x.txt", bytes: 12))) {
            _ = try await harness.workspace.applyPatch(Array("--- a/x.txt\n+++ /dev/null\n".utf8))
        }
        #expect(try harness.project.read("x.txt") == "foo\nbar\nbaz\n")
        let whole = "--- a/x.txt\n+++ /dev/null\n@@ -1,3 +0,0 @@\n-foo\n-bar\n-baz\n"
        let deleted = try await harness.workspace.applyPatch(Array(whole.utf8))
        #expect(deleted.map(\.path) == ["x.txt"])
        #expect(try await harness.workspace.read("x.txt").content == nil)
        await harness.stop()
    }
}

/// The journal's pin of a large clean file (a hard link) never changes how the file is written,
/// and a file changed under it stops the chain from depending on it.
@Suite struct PinnedBaseWorkspaceTests {
    static let large = String(repeating: "a line of a file past a mebibyte\n", count: 40_000)
    static let keystroke = [TextEdit(range: TextRange(start: TextPosition(line: 2, character: 0), end: TextPosition(line: 2, character: 0)), text: Array("k".utf8))]

    func pins(_ harness: WorkspaceHarness) throws -> [String] {
        (try? FileManager.default.contentsOfDirectory(atPath: harness.project.path + "/.autosave/journal/bases")) ?? []
    }

    @Test func aPinnedFileIsStillSavedByReplacingItAndItsPinGoes() async throws {
        let harness = try await WorkspaceHarness(files: ["big.txt": Self.large])
        let before = try #require(Fingerprint.of(harness.project.path + "/big.txt"))
        _ = try await harness.workspace.acceptEdits("big.txt", Self.keystroke, encoding: .utf8)
        #expect(try pins(harness).count == 1, "a clean file past a mebibyte is pinned")
        #expect(Fingerprint.of(harness.project.path + "/big.txt")?.links == 1, "by a copy, not a link the user's tools would see")
        try await harness.workspace.save(["big.txt"])
        let saved = try #require(harness.logged("saved").last)
        #expect(saved.fields["inPlace"] == nil, "the save replaces the file")
        let after = try #require(Fingerprint.of(harness.project.path + "/big.txt"))
        #expect(after.inode != before.inode && after.links == 1)
        #expect(try pins(harness).isEmpty, "saved: the pin goes")
        await harness.stop()
    }

    @Test func aSmallFileIsNeverPinned() async throws {
        let harness = try await WorkspaceHarness(files: ["small.txt": String(repeating: "short line\n", count: 1_000)])
        _ = try await harness.workspace.acceptEdits("small.txt", Self.keystroke, encoding: .utf8)
        #expect(try pins(harness).isEmpty)
        #expect(Fingerprint.of(harness.project.path + "/small.txt")?.links == 1)
        await harness.stop()
    }

    /// A tool writes the pinned file in place while the buffer has unsaved edits: the pinned
    /// version changed with it, so the journal takes the buffer's whole text and drops the pin.
    @Test func aPinnedFileWrittenInPlaceEndsTheChainWithTheWholeText() async throws {
        let harness = try await WorkspaceHarness(files: ["big.txt": Self.large])
        _ = try await harness.workspace.acceptEdits("big.txt", Self.keystroke, encoding: .utf8)
        #expect(try pins(harness).count == 1)
        let handle = try #require(FileHandle(forWritingAtPath: harness.project.path + "/big.txt"))
        try handle.write(contentsOf: Data("A".utf8))
        try handle.close()
        await harness.settleExternalChanges()
        #expect(try pins(harness).isEmpty, "the chain no longer stands on the file")
        let (_, recovery) = try EditJournal.open(directory: harness.project.path + "/.autosave/journal", fsync: false)
        #expect(recovery.brokenChains.isEmpty)
        #expect(recovery.records.map { String(decoding: $0.content, as: UTF8.self) } == [try await harness.text("big.txt")],
            "a crash now brings back the buffer's text")
        await harness.stop()
    }
}
