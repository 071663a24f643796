import AutosaveTestKit
import Foundation
import Testing

@testable import AutosaveHistory

/// The `+3 -1` of `autosave history`: the counts of a shortest line diff, checked against a
/// textbook LCS on random texts, cheap on a large file with a small change, and an honest upper
/// bound when the search would be long.
@Suite struct LineChangesTests {
    func changes(_ old: String, _ new: String) -> LineChanges? {
        LineChanges.between(Array(old.utf8), Array(new.utf8))
    }

    @Test func countsWhatAUserWouldCount() {
        #expect(changes("a\nb\nc\n", "a\nb\nc\n") == LineChanges(added: 0, removed: 0))
        #expect(
            changes("a\nb\nc\n", "a\nB\nc\n") == LineChanges(added: 1, removed: 1), "a changed line is one out, one in")
        #expect(changes("a\nb\nc\n", "a\nc\n") == LineChanges(added: 0, removed: 1))
        #expect(changes("a\nc\n", "a\nb\nb2\nc\n") == LineChanges(added: 2, removed: 0))
        #expect(changes("", "one\ntwo\n") == LineChanges(added: 2, removed: 0))
        #expect(changes("one\ntwo\n", "") == LineChanges(added: 0, removed: 2))
        #expect(
            changes("a\nb", "a\nb\n") == LineChanges(added: 1, removed: 1), "a last line gaining its line break changes"
        )
        #expect(
            changes("a\nb\n", "a\nbc\n") == LineChanges(added: 1, removed: 1),
            "a prefix of bytes is not a prefix of lines")
        #expect(
            changes("x\na\n", "y\na\n") == LineChanges(added: 1, removed: 1),
            "a suffix of bytes is not a suffix of lines")
        #expect(changes("a\r\nb\r\n", "a\nb\r\n") == LineChanges(added: 1, removed: 1), "a \\r is part of its line")
        #expect(changes("a\nb\na\nb\n", "b\na\nb\na\n") == LineChanges(added: 1, removed: 1))
        #expect(changes("same\n", "same\nsame\nsame\n") == LineChanges(added: 2, removed: 0))
    }

    @Test func binaryContentsHaveNoLines() {
        #expect(LineChanges.between([0x61, 0, 0x0A], Array("a\n".utf8)) == nil)
        #expect(LineChanges.between(Array("a\n".utf8), [0, 1, 2]) == nil)
        let lateNUL = [UInt8](repeating: 0x61, count: 9000) + [0]
        #expect(
            LineChanges.between(lateNUL, Array("a\n".utf8)) != nil,
            "only the first 8000 bytes are looked at, as git does")
    }

    @Test func randomTextsCountAsTheLongestCommonSubsequenceSays() {
        var random = SplitMix64(seed: 35)
        for round in 0..<400 {
            // Few distinct lines, so that many match and the search has choices to make.
            let alphabet = ["a\n", "b\n", "c\n", "dd\n", "\n", "e"]
            func text() -> [String] { (0..<random.below(14)).map { _ in alphabet[random.below(alphabet.count)] } }
            let old = text()
            let new = text()
            // A line without a line break only ends a text.
            let oldText = Self.joined(old)
            let newText = Self.joined(new)
            let oldLines = Self.lines(oldText)
            let newLines = Self.lines(newText)
            let common = Self.longestCommonSubsequence(oldLines, newLines)
            let expected = LineChanges(added: newLines.count - common, removed: oldLines.count - common)
            #expect(
                LineChanges.between(Array(oldText.utf8), Array(newText.utf8)) == expected,
                "round \(round): \(oldText.debugDescription) → \(newText.debugDescription)")
        }
    }

    @Test func aOneLineChangeToAMegabyteIsExactAndQuick() {
        let old = text(lines: 16_384, seed: 1)
        var new = old
        new.replaceSubrange(64 * 9_000..<(64 * 9_000 + 5), with: Array("EDIT!".utf8))
        let clock = ContinuousClock()
        var counted: LineChanges?
        let elapsed = clock.measure { counted = LineChanges.between(old, new) }
        #expect(counted == LineChanges(added: 1, removed: 1))
        // A debug build: the bench measures release. A full diff of 16,384 lines would take far longer.
        #expect(elapsed < .milliseconds(500), "took \(elapsed)")
    }

    @Test func pastTheStepLimitTheCountsAreTheMiddleAsAnUpperBound() {
        // Every other line swapped with its neighbour: a shortest script of 2 edits per pair.
        let old = (0..<100).map { "line \($0)\n" }
        var new = old
        for pair in stride(from: 0, to: 100, by: 2) { new.swapAt(pair, pair + 1) }
        let oldBytes = Array(old.joined().utf8)
        let newBytes = Array(new.joined().utf8)
        #expect(LineChanges.between(oldBytes, newBytes) == LineChanges(added: 50, removed: 50))
        #expect(
            LineChanges.between(oldBytes, newBytes, stepLimit: 100) == LineChanges(added: 100, removed: 100),
            "every line between the common prefix and suffix, counted once each way")
    }

    // MARK: - A textbook reference

    static func joined(_ lines: [String]) -> String {
        var text = ""
        for line in lines {
            if !text.isEmpty && !text.hasSuffix("\n") { text += "\n" }
            text += line
        }
        return text
    }

    static func lines(_ text: String) -> [String] {
        var lines: [String] = []
        var current = ""
        for character in text {
            current.append(character)
            if character == "\n" {
                lines.append(current)
                current = ""
            }
        }
        if !current.isEmpty { lines.append(current) }
        return lines
    }

    static func longestCommonSubsequence(_ a: [String], _ b: [String]) -> Int {
        var table = [[Int]](repeating: [Int](repeating: 0, count: b.count + 1), count: a.count + 1)
        for i in 0..<a.count {
            for j in 0..<b.count {
                table[i + 1][j + 1] = a[i] == b[j] ? table[i][j] + 1 : max(table[i][j + 1], table[i + 1][j])
            }
        }
        return table[a.count][b.count]
    }
}
