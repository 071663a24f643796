import AutosaveKit
import AutosaveTestKit
import Foundation
import PropertyBased
import Testing

/// Unified diffs as git, diff -u and coding agents write them: read, placed, and refused whole
/// with the hunk and the line that does not fit.
@Suite struct PatchTests {
    func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

    func patched(_ text: String, _ patch: String) throws -> String {
        let diff = try UnifiedDiff(parsing: bytes(patch))
        return String(decoding: try HunkPlacement.apply(diff.files[0].hunks, to: bytes(text), path: diff.files[0].path), as: UTF8.self)
    }

    @Test func gitsPrefixesAndDiffsTimestampsAreNotPartOfThePath() throws {
        let git = try UnifiedDiff(parsing: bytes("diff --git a/src/x.c b/src/x.c\nindex 1..2 100644\n--- a/src/x.c\n+++ b/src/x.c\n@@ -1 +1 @@\n-a\n+b\n"))
        #expect(git.files.map(\.path) == ["src/x.c"])
        let plain = try UnifiedDiff(parsing: bytes("--- x.c\t2026-11-25 10:00:00 +0000\n+++ x.c\t2026-11-25 10:01:00 +0000\n@@ -1 +1 @@\n-a\n+b\n"))
        #expect(plain.files.map(\.path) == ["x.c"])
        let created = try UnifiedDiff(parsing: bytes("--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1,2 @@\n+one\n+two\n"))
        #expect(created.files.first?.oldPath == nil && created.files.first?.newPath == "new.txt")
        let deleted = try UnifiedDiff(parsing: bytes("--- a/old.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-gone\n"))
        #expect(deleted.files.first?.newPath == nil && deleted.files.first?.path == "old.txt")
    }

    @Test func aMissingFinalNewlineIsKeptOnEitherSide() throws {
        #expect(try patched("a\nb", "--- f\n+++ f\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+c\n") == "a\nc\n")
        #expect(try patched("a\nb\n", "--- f\n+++ f\n@@ -1,2 +1,2 @@\n a\n-b\n+c\n\\ No newline at end of file\n") == "a\nc")
        // A last line ending in a bare `\r` (found by FuzzPatch's diff -u round trip): the `\r` is the file's.
        #expect(try patched("a\nb\n", "--- f\n+++ f\n@@ -1,2 +1,2 @@\n a\n-b\n+c\r\n\\ No newline at end of file\n") == "a\nc\r")
    }

    @Test func anEmptyContextLineWhoseSpaceWasTrimmedStillCounts() throws {
        #expect(try patched("a\n\nb\n", "--- f\n+++ f\n@@ -1,3 +1,3 @@\n a\n\n-b\n+B\n") == "a\n\nB\n")
    }

    @Test func aHunkGoesToTheNearestPlaceItsLinesAreWhenTheFileMovedOn() throws {
        let text = (1...20).map { "\($0)\n" }.joined()
        // Written against a file with two lines fewer at the top.
        let patch = "--- f\n+++ f\n@@ -8,3 +8,3 @@\n 10\n-11\n+eleven\n 12\n"
        #expect(try patched(text, patch) == text.replacingOccurrences(of: "\n11\n", with: "\neleven\n"))
    }

    @Test func aHunkThatFitsNowhereIsNamedWithTheLineItExpected() {
        let patch = "--- f\n+++ f\n@@ -2,2 +2,2 @@\n two\n-three\n+THREE\n"
        #expect(throws: PatchError.hunkDoesNotApply(path: "f", hunk: "@@ -2,2 +2,2 @@", line: 3, expected: "three", found: "3")) {
            try patched("one\ntwo\n3\n", patch)
        }
        #expect(throws: PatchError.hunkDoesNotApply(path: "f", hunk: "@@ -2,2 +2,2 @@", line: 2, expected: "two", found: nil)) {
            try patched("one\n", patch)
        }
        let message = PatchError.hunkDoesNotApply(path: "f", hunk: "@@ -2,2 +2,2 @@", line: 3, expected: "three", found: "3").description
        #expect(message == "f: hunk @@ -2,2 +2,2 @@ does not apply: line 3 should be `three` but is `3`; nothing was changed")
    }

    @Test func aHeaderNamingALineFarPastTheEndIsSearchedNoFurtherThanTheText() throws {
        #expect(try patched("a\nb\n", "--- f\n+++ f\n@@ -999999999999 +999999999999 @@\n-b\n+B\n") == "a\nB\n")
        #expect(throws: PatchError.hunkDoesNotApply(path: "f", hunk: "@@ -999999999999 +999999999999 @@", line: 999_999_999_999, expected: "c", found: nil)) {
            try patched("a\nb\n", "--- f\n+++ f\n@@ -999999999999 +999999999999 @@\n-c\n+C\n")
        }
    }

    @Test func aChangeLineTheHeaderDoesNotCountIsRefusedNotDropped() {
        #expect(throws: UnifiedDiff.ParseError.badHunkLine(line: 7, "-d")) {
            try UnifiedDiff(parsing: bytes("--- f\n+++ f\n@@ -1,2 +1,2 @@\n a\n-b\n+c\n-d\n+e\n"))
        }
    }

    @Test func patchesThatCannotBeReadSayWhichLine() {
        #expect(throws: UnifiedDiff.ParseError.hunkWithoutFile(line: 1)) { try UnifiedDiff(parsing: bytes("@@ -1 +1 @@\n-a\n+b\n")) }
        #expect(throws: UnifiedDiff.ParseError.badHunkHeader(line: 3, "@@ -x +1 @@")) {
            try UnifiedDiff(parsing: bytes("--- f\n+++ f\n@@ -x +1 @@\n"))
        }
        #expect(throws: UnifiedDiff.ParseError.badHunkLine(line: 5, "*b")) {
            try UnifiedDiff(parsing: bytes("--- f\n+++ f\n@@ -1,2 +1,2 @@\n a\n*b\n"))
        }
        #expect(throws: UnifiedDiff.ParseError.badHunkLine(line: 5, "(end of the patch)")) {
            try UnifiedDiff(parsing: bytes("--- f\n+++ f\n@@ -1,3 +1,3 @@\n a\n"))
        }
        #expect(throws: UnifiedDiff.ParseError.empty) { try UnifiedDiff(parsing: bytes("just some words\n")) }
    }

    /// What `diff -u` says turns one random text into another does exactly that.
    @Test func diffUsOwnPatchesTurnTheOldTextIntoTheNew() async throws {
        let folder = try TemporaryDirectory()
        var random = Xoshiro(seed: (0x7061_7463, 0x6865_7321, 0x6469_6666, 0x2D75_2121))
        let texts = Gen.int(in: 0...9).array(of: 0...40)
        for index in 0..<150 {
            // Few distinct lines, so hunks repeat and placement has to be exact.
            let words = ["alpha", "beta", "gamma", "", "delta", "alpha", "é😀", "beta", "x", "gamma"]
            let old = texts.run(using: &random).map { words[$0] + "\n" }.joined()
            var new = texts.run(using: &random).map { words[$0] + "\n" }.joined()
            if index % 5 == 0 { new = String(new.dropLast()) }
            try folder.write("old.txt", old)
            try folder.write("new.txt", new)
            // Awaited, not waited for: a test thread blocked on 150 processes starves other tests.
            let diff = try await AgentProcess.run(["-u", "old.txt", "new.txt"], executable: "/usr/bin/diff", in: folder.path)
            let patch = diff.stdout.isEmpty ? "" : diff.stdout + "\n"
            guard !patch.isEmpty else { continue }
            #expect(try patched(old, patch) == new, "case \(index)")
        }
    }
}
