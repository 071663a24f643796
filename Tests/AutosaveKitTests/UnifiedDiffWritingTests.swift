import AutosaveKit
import AutosaveTestKit
import Foundation
import Testing

/// The diff `autosave diff` prints: what `diff -u` prints for the same two texts, and one that
/// turns the old text into the new one byte for byte when applied.
@Suite struct UnifiedDiffWritingTests {
    func written(_ old: String, _ new: String) -> String {
        let lines = UnifiedDiff.lines(from: Array(old.utf8), to: Array(new.utf8), oldLabel: "a", newLabel: "b")
        return String(decoding: lines.flatMap(\.bytes), as: UTF8.self)
    }

    @Test func writesWhatGNUDiffWrites() {
        let old = (1...16).map { "\($0)\n" }.joined()
        let new = old.replacingOccurrences(of: "\n2\n", with: "\ntwo\n").replacingOccurrences(of: "\n9\n", with: "\n")
            .replacingOccurrences(of: "\n16\n", with: "\n16\nseventeen\nx")
        // `diff -u a b` of the same files, without its timestamps: changes six lines apart share a
        // hunk, seven apart do not.
        let expected = """
            --- a
            +++ b
            @@ -1,12 +1,11 @@
             1
            -2
            +two
             3
             4
             5
             6
             7
             8
            -9
             10
             11
             12
            @@ -14,3 +13,5 @@
             14
             15
             16
            +seventeen
            +x
            \\ No newline at end of file

            """
        #expect(written(old, new) == expected)
    }

    @Test func headersCountLinesAsDiffDoes() {
        #expect(written("", "one\ntwo\n") == "--- a\n+++ b\n@@ -0,0 +1,2 @@\n+one\n+two\n")
        #expect(written("gone\n", "") == "--- a\n+++ b\n@@ -1 +0,0 @@\n-gone\n")
        #expect(written("a\nb\n", "a\nb\n").isEmpty, "no difference, no diff")
        let kinds = UnifiedDiff.lines(from: Array("a\nb".utf8), to: Array("a\nc\n".utf8), oldLabel: "a", newLabel: "b")
            .map(\.kind)
        #expect(kinds == [.fileHeader, .fileHeader, .hunkHeader, .context, .removed, .noNewline, .added])
    }

    @Test func randomEditsApplyBackToTheNewText() throws {
        var random = SplitMix64(seed: 11)
        let alphabet = ["a\n", "b\n", "c\n", "\n", "a longer line\n", "tab\there\r\n"]
        for round in 0..<300 {
            var old = (0..<random.below(40)).map { _ in alphabet[random.below(alphabet.count)] }
            var new = old
            for _ in 0..<random.below(6) {
                let position = random.below(new.count + 1)
                switch random.below(3) {
                case 0: new.insert(alphabet[random.below(alphabet.count)], at: position)
                case 1 where position < new.count: new.remove(at: position)
                default: if position < new.count { new[position] = alphabet[random.below(alphabet.count)] }
                }
            }
            // Sometimes a last line without its line break, on either side.
            if random.below(4) == 0, let last = old.popLast() { old.append(String(last.dropLast())) }
            if random.below(4) == 0, let last = new.popLast() { new.append(String(last.dropLast())) }
            let oldBytes = Array(old.joined().utf8)
            let newBytes = Array(new.joined().utf8)
            let lines = UnifiedDiff.lines(from: oldBytes, to: newBytes, oldLabel: "f", newLabel: "f")
            guard oldBytes != newBytes else {
                #expect(lines.isEmpty)
                continue
            }
            let diff = try UnifiedDiff(parsing: lines.flatMap(\.bytes))
            let applied = try HunkPlacement.apply(diff.files[0].hunks, to: oldBytes, path: "f")
            #expect(
                applied == newBytes,
                "round \(round): \(old.joined().debugDescription) → \(new.joined().debugDescription)")
            let contextRuns = lines.split { $0.kind != .context }.map(\.count)
            #expect(contextRuns.allSatisfy { $0 <= 6 }, "at most 3 lines of context each side, 6 between two changes")
        }
    }
}
