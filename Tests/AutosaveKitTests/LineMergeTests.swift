@testable import AutosaveKit
import AutosaveTestKit
import Testing

@Suite struct LineMergeTests {
    // MARK: Helpers

    private func merge(_ base: String, _ ours: String, _ theirs: String) -> MergeResult {
        LineMerge.merge(base: Array(base.utf8), ours: Array(ours.utf8), theirs: Array(theirs.utf8))
    }

    private func merged(_ text: String) -> MergeResult {
        .merged(Array(text.utf8))
    }

    // MARK: Trivial cases

    @Test func identicalSidesMergeToThatSide() {
        #expect(merge("a\nb\n", "a\nX\n", "a\nX\n") == merged("a\nX\n"))
        #expect(merge("a\nb\n", "", "") == merged(""))
        #expect(merge("", "", "") == merged(""))
        #expect(merge("a\n", "a\n", "a\n") == merged("a\n"))
    }

    @Test func oneSideUnchangedTakesTheOther() {
        #expect(merge("a\nb\nc\n", "a\nb\nc\n", "x\ny\n") == merged("x\ny\n"))
        #expect(merge("a\nb\nc\n", "x\ny\n", "a\nb\nc\n") == merged("x\ny\n"))
        #expect(merge("a\nb\nc\n", "a\nb\nc\n", "") == merged(""))
        #expect(merge("a\nb\nc\n", "", "a\nb\nc\n") == merged(""))
    }

    // MARK: Clean merges

    @Test func editsAtDifferentPlacesMerge() {
        let base = "1\n2\n3\n4\n5\n6\n7\n8\n9\n"
        // Start and end.
        #expect(merge(base, "ONE\n2\n3\n4\n5\n6\n7\n8\n9\n", "1\n2\n3\n4\n5\n6\n7\n8\nNINE\n")
            == merged("ONE\n2\n3\n4\n5\n6\n7\n8\nNINE\n"))
        // Middle and start.
        #expect(merge(base, "1\n2\n3\n4\nFIVE\n6\n7\n8\n9\n", "ONE\n2\n3\n4\n5\n6\n7\n8\n9\n")
            == merged("ONE\n2\n3\n4\nFIVE\n6\n7\n8\n9\n"))
        // Middle and end, several lines each, one unchanged line between them.
        #expect(merge(base, "1\n2\nC\nD\n5\n6\n7\n8\n9\n", "1\n2\n3\n4\n5\nF\nG\nH\nI\n")
            == merged("1\n2\nC\nD\n5\nF\nG\nH\nI\n"))
        // Deletion on one side, modification on the other.
        #expect(merge(base, "1\n2\n5\n6\n7\n8\n9\n", "1\n2\n3\n4\n5\n6\n7\nEIGHT\n9\n")
            == merged("1\n2\n5\n6\n7\nEIGHT\n9\n"))
        // Both sides edit several separate places.
        #expect(merge(base, "X\n2\n3\nY\n5\n6\n7\n8\n9\n", "1\n2\nP\n4\n5\n6\nQ\n8\nR\n")
            == .conflict, "3 -> P touches 4 -> Y")
        #expect(merge(base, "X\n2\n3\n4\nY\n6\n7\n8\n9\n", "1\n2\nP\n4\n5\n6\nQ\n8\nR\n")
            == merged("X\n2\nP\n4\nY\n6\nQ\n8\nR\n"))
    }

    @Test func insertionsAtDifferentPlacesMerge() {
        let base = "a\nb\nc\nd\n"
        #expect(merge(base, "new\na\nb\nc\nd\n", "a\nb\nc\nd\nend\n") == merged("new\na\nb\nc\nd\nend\n"))
        #expect(merge(base, "a\nx\nb\nc\nd\n", "a\nb\nc\ny\nd\n") == merged("a\nx\nb\nc\ny\nd\n"))
        #expect(merge(base, "a\nx1\nx2\nx3\nb\nc\nd\n", "a\nb\ny\nc\nd\n") == merged("a\nx1\nx2\nx3\nb\ny\nc\nd\n"))
        // An insertion next to an edit of a line further away.
        #expect(merge(base, "a\nx\nb\nc\nd\n", "a\nb\nc\nD\n") == merged("a\nx\nb\nc\nD\n"))
    }

    @Test func sameChangeOnBothSidesAppliesOnce() {
        let base = "a\nb\nc\nd\ne\n"
        #expect(merge(base, "a\nB\nc\nd\ne\n", "a\nB\nc\nd\nE\n") == merged("a\nB\nc\nd\nE\n"))
        #expect(merge(base, "a\nc\nd\ne\nf\n", "a\nc\nd\ne\n") == merged("a\nc\nd\ne\nf\n"))
        #expect(merge(base, "a\nb\nnew\nc\nd\nE\n", "A\nb\nnew\nc\nd\ne\n") == merged("A\nb\nnew\nc\nd\nE\n"))
        // Identical insertion at the same place.
        #expect(merge(base, "a\nb\nnew\nc\nd\ne\nz\n", "a\nb\nnew\nc\nd\ne\n") == merged("a\nb\nnew\nc\nd\ne\nz\n"))
    }

    @Test func crlfLinesAreJustBytes() {
        let base = "a\r\nb\r\nc\r\nd\r\n"
        #expect(merge(base, "A\r\nb\r\nc\r\nd\r\n", "a\r\nb\r\nc\r\nD\r\n") == merged("A\r\nb\r\nc\r\nD\r\n"))
        // A line ending change is a change of that line.
        #expect(merge(base, "a\nb\r\nc\r\nd\r\n", "a\r\nb\r\nc\r\nd\n") == merged("a\nb\r\nc\r\nd\n"))
        #expect(merge(base, "a\nb\r\nc\r\nd\r\n", "a\r\nB\r\nc\r\nd\r\n") == .conflict)
    }

    // MARK: Conflicts

    @Test func sameLineChangedDifferentlyConflicts() {
        #expect(merge("a\nb\nc\n", "a\nX\nc\n", "a\nY\nc\n") == .conflict)
        #expect(merge("a\n", "x\n", "y\n") == .conflict)
        #expect(merge("a\nb\nc\n", "a\nb\nX\n", "a\nb\nY\n") == .conflict)
    }

    @Test func adjacentLineEditsConflict() {
        #expect(merge("a\nb\nc\nd\n", "a\nB\nc\nd\n", "a\nb\nC\nd\n") == .conflict)
        #expect(merge("a\nb\nc\nd\n", "A\nb\nc\nd\n", "a\nB\nc\nd\n") == .conflict)
        // An insertion right after a line the other side changed.
        #expect(merge("a\nb\nc\n", "a\nB\nc\n", "a\nb\nnew\nc\n") == .conflict)
        // An insertion right before a line the other side changed.
        #expect(merge("a\nb\nc\n", "a\nB\nc\n", "a\nnew\nb\nc\n") == .conflict)
    }

    @Test func insertionsAtTheSamePlaceConflict() {
        #expect(merge("a\nb\n", "a\nx\nb\n", "a\ny\nb\n") == .conflict)
        #expect(merge("a\nb\n", "a\nb\nx\n", "a\nb\ny\n") == .conflict)
        #expect(merge("a\nb\n", "x\na\nb\n", "y\na\nb\n") == .conflict)
    }

    @Test func deletingARegionTheOtherSideEditsConflicts() {
        let base = "a\nb\nc\nd\ne\nf\n"
        #expect(merge(base, "a\nf\n", "a\nb\nC\nd\ne\nf\n") == .conflict)
        #expect(merge(base, "a\nb\nC\nd\ne\nf\n", "a\nf\n") == .conflict)
        #expect(merge(base, "", "a\nb\nc\nD\ne\nf\n") == .conflict)
        // Deleting a line next to one the other side edits.
        #expect(merge(base, "a\nb\nd\ne\nf\n", "a\nb\nc\nD\ne\nf\n") == .conflict)
    }

    // MARK: Bytes

    @Test func missingFinalNewlineIsPreserved() {
        // Ours drops the final newline, theirs edits the top: both survive.
        #expect(merge("a\nb\nc\nd\n", "a\nb\nc\nd", "A\nb\nc\nd\n") == merged("A\nb\nc\nd"))
        // Base lacks it; theirs keeps lacking it while ours edits elsewhere.
        #expect(merge("a\nb\nc\nd", "A\nb\nc\nd", "a\nb\nc\nd") == merged("A\nb\nc\nd"))
        #expect(merge("a\nb\nc\nd", "A\nb\nc\nd", "a\nb\nc\nD") == merged("A\nb\nc\nD"))
        #expect(merge("a\nb\nc\nd", "a\nb\nC\nd", "a\nb\nc\nD") == .conflict)
        #expect(merge("a\nb\nc\nd", "A\nb\nc\nd", "a\nb\nc\nd\n") == merged("A\nb\nc\nd\n"))
        // Appending after a last line without a newline changes that line.
        #expect(merge("a\nb\nc\nd", "A\nb\nc\nd", "a\nb\nc\ndmore\n") == merged("A\nb\nc\ndmore\n"))
        // Only the newline differs: the same line changed two ways.
        #expect(merge("a\nb", "a\nb\n", "a\nB") == .conflict)
        // A file that is one unterminated line.
        #expect(merge("only", "only", "changed") == merged("changed"))
    }

    @Test func arbitraryBytesRoundTrip() {
        let base: [UInt8] = [0xFF, 0xFE, 0x0A, 0x00, 0x00, 0x0A, 0xC3, 0x28, 0x0A, 0x80, 0x0A, 0xED, 0xA0, 0x80, 0x0A]
        var ours = base
        ours[0] = 0xF0  // first line: F0 FE
        var theirs = base
        theirs.replaceSubrange(11...14, with: [0x00, 0xFF, 0x0D, 0x0A, 0x9F])  // last line changed, no final newline
        var expected = theirs
        expected[0] = 0xF0
        #expect(LineMerge.merge(base: base, ours: ours, theirs: theirs) == .merged(expected))
        #expect(LineMerge.merge(base: base, ours: theirs, theirs: ours) == .merged(expected))

        // The same invalid UTF-8 changed two ways conflicts; compared as bytes, not as decoded text.
        var other = base
        other[0] = 0xF1
        #expect(LineMerge.merge(base: base, ours: ours, theirs: other) == .conflict)

        // NUL bytes only, no newline anywhere.
        let zeros = [UInt8](repeating: 0, count: 10)
        #expect(LineMerge.merge(base: zeros, ours: zeros + [0], theirs: zeros) == .merged(zeros + [0]))
        #expect(LineMerge.merge(base: zeros, ours: zeros + [0], theirs: [0]) == .conflict)
    }

    @Test func emptyBaseWithBothSidesAdding() {
        #expect(merge("", "one\ntwo\n", "three\n") == .conflict)
        #expect(merge("", "one\ntwo\n", "one\ntwo") == .conflict)
        #expect(merge("", "one\ntwo\n", "one\ntwo\n") == merged("one\ntwo\n"))
        #expect(merge("", "one\ntwo\n", "") == merged("one\ntwo\n"))
    }

    @Test func hugeLinesAndEmptyLines() {
        let long = [UInt8](repeating: 0x61, count: 300_000)
        let base = long + [0x0A] + Array("mid\n".utf8) + long
        let ours = long + [0x62, 0x0A] + Array("mid\n".utf8) + long
        let theirs = long + [0x0A] + Array("mid\n".utf8) + long + [0x0A]
        let expected = long + [0x62, 0x0A] + Array("mid\n".utf8) + long + [0x0A]
        #expect(LineMerge.merge(base: base, ours: ours, theirs: theirs) == .merged(expected))
        #expect(merge("\n\n\n\n\n", "\nx\n\n\n\n", "\n\n\n\ny\n") == merged("\nx\n\n\ny\n"))
    }

    // MARK: Scale

    @Test func largeFileWithScatteredEditsMergesQuickly() {
        var random = SplitMix64(seed: 0x1_2345)
        let letters = Array("abcdefghijklmnopqrstuvwxyz ".utf8)
        var baseLines: [[UInt8]] = []
        for index in 0..<20_000 {
            var line = Array("line \(index): ".utf8)
            while line.count < 51 { line.append(letters[random.below(letters.count)]) }
            line.append(0x0A)
            baseLines.append(line)
        }
        // Per block of 100 lines, one line changed on each side: ours in 0..<45, theirs in 50..<95 of the block,
        // so the two sides' changes are never adjacent. Some are deletions or grow into two lines.
        var oursEdits: [Int: [[UInt8]]] = [:]
        var theirsEdits: [Int: [[UInt8]]] = [:]
        for block in 0..<200 {
            let oursLine = block * 100 + random.below(45)
            let theirsLine = block * 100 + 50 + random.below(45)
            let oursNew = Array("ours changed \(oursLine)\n".utf8)
            let theirsNew = Array("theirs changed \(theirsLine)\n".utf8)
            // Mostly one line replaced; now and then a deletion, or a replacement plus an inserted line.
            switch block % 10 {
            case 3: oursEdits[oursLine] = []
            case 6: oursEdits[oursLine] = [oursNew, oursNew]
            default: oursEdits[oursLine] = [oursNew]
            }
            switch block % 9 {
            case 4: theirsEdits[theirsLine] = []
            case 7: theirsEdits[theirsLine] = [theirsNew, baseLines[theirsLine]]
            default: theirsEdits[theirsLine] = [theirsNew]
            }
        }
        func build(_ edits: [[Int: [[UInt8]]]]) -> [UInt8] {
            var bytes: [UInt8] = []
            for index in baseLines.indices {
                var replacement: [[UInt8]] = [baseLines[index]]
                for sideEdits in edits {
                    if let lines = sideEdits[index] { replacement = lines }
                }
                for line in replacement { bytes.append(contentsOf: line) }
            }
            return bytes
        }
        let base = build([])
        let ours = build([oursEdits])
        let theirs = build([theirsEdits])
        let expected = build([oursEdits, theirsEdits])
        #expect(base.count > 1_000_000)

        let clock = ContinuousClock()
        var result = MergeResult.conflict
        let elapsed = clock.measure {
            result = LineMerge.merge(base: base, ours: ours, theirs: theirs)
        }
        print("LineMerge: 20,000-line merge of \(base.count) bytes took \(elapsed)")
        #expect(result == .merged(expected))
        #expect(elapsed < .seconds(1))

        // A conflict in the same file is found as quickly.
        var conflicting = theirs
        conflicting.replaceSubrange(0..<0, with: Array("theirs adds a first line\n".utf8))
        var oursAtTop = ours
        oursAtTop.replaceSubrange(0..<0, with: Array("ours adds a first line\n".utf8))
        let conflictElapsed = clock.measure {
            result = LineMerge.merge(base: base, ours: oursAtTop, theirs: conflicting)
        }
        #expect(result == .conflict)
        #expect(conflictElapsed < .seconds(1))
    }

    @Test func pathologicalInputsFinish() {
        // Two-line alphabets give diffs with huge numbers of equally good alignments.
        var random = SplitMix64(seed: 99)
        func noise(_ count: Int) -> [UInt8] {
            var bytes: [UInt8] = []
            for _ in 0..<count { bytes.append(contentsOf: random.below(2) == 0 ? [0x61, 0x0A] : [0x62, 0x0A]) }
            return bytes
        }
        let base = noise(6_000)
        let ours = noise(6_000)
        let theirs = noise(6_000)
        let clock = ContinuousClock()
        var result = MergeResult.conflict
        let elapsed = clock.measure {
            result = LineMerge.merge(base: base, ours: ours, theirs: theirs)
        }
        print("LineMerge: pathological 6,000-line merge took \(elapsed)")
        #expect(result == LineMerge.merge(base: base, ours: theirs, theirs: ours))
        #expect(elapsed < .seconds(5))

        // Wholly different files: every line unique to its side.
        let a = Array((0..<20_000).map { "a\($0)\n" }.joined().utf8)
        let b = Array((0..<20_000).map { "b\($0)\n" }.joined().utf8)
        let c = Array((0..<20_000).map { "c\($0)\n" }.joined().utf8)
        let disjointElapsed = clock.measure {
            result = LineMerge.merge(base: a, ours: b, theirs: c)
        }
        #expect(result == .conflict)
        #expect(disjointElapsed < .seconds(2))
    }

    // MARK: Properties

    /// Base lines and inserted lines are all distinct, so the diff of each side is unambiguous and disjoint,
    /// non-adjacent edit sets must merge to exactly both edit sets applied.
    @Test func disjointEditsMergeToBothApplied() {
        var random = SplitMix64(seed: 0xDEC0DE)
        for caseIndex in 0..<400 {
            let scenario = EditScenario.random(&random, caseIndex: caseIndex)
            let base = scenario.apply(sides: [])
            let ours = scenario.apply(sides: [.ours])
            let theirs = scenario.apply(sides: [.theirs])
            let both = scenario.apply(sides: [.ours, .theirs])
            #expect(LineMerge.merge(base: base, ours: ours, theirs: theirs) == .merged(both), "case \(caseIndex)")
            #expect(LineMerge.merge(base: base, ours: theirs, theirs: ours) == .merged(both), "case \(caseIndex)")
            #expect(LineMerge.merge(base: base, ours: ours, theirs: ours) == .merged(ours), "case \(caseIndex)")
            #expect(LineMerge.merge(base: base, ours: base, theirs: theirs) == .merged(theirs), "case \(caseIndex)")
            #expect(LineMerge.merge(base: base, ours: ours, theirs: base) == .merged(ours), "case \(caseIndex)")
            #expect(LineMerge.merge(base: base, ours: both, theirs: both) == .merged(both), "case \(caseIndex)")
        }
    }

    /// Heavily repetitive lines and arbitrary (also overlapping) edits: the merge must be total, symmetric in its two
    /// sides, and idempotent.
    @Test func arbitraryEditsAreSymmetricAndNeverTrap() {
        var random = SplitMix64(seed: 7)
        let vocabulary: [[UInt8]] = [[0x61, 0x0A], [0x62, 0x0A], [0x0A], [0x7D, 0x0A], [0xFF, 0x0A], [0x63]]
        func randomText(_ count: Int) -> [UInt8] {
            var bytes: [UInt8] = []
            for _ in 0..<count { bytes.append(contentsOf: vocabulary[random.below(vocabulary.count)]) }
            return bytes
        }
        func mutate(_ text: [UInt8]) -> [UInt8] {
            var text = text
            for _ in 0..<random.below(4) {
                let start = random.below(text.count + 1)
                let end = min(text.count, start + random.below(6))
                text.replaceSubrange(start..<end, with: randomText(random.below(3)))
            }
            return text
        }
        var mergedCount = 0
        for caseIndex in 0..<400 {
            let base = randomText(random.below(30))
            let ours = mutate(base)
            let theirs = mutate(base)
            let result = LineMerge.merge(base: base, ours: ours, theirs: theirs)
            #expect(result == LineMerge.merge(base: base, ours: theirs, theirs: ours), "case \(caseIndex)")
            #expect(LineMerge.merge(base: base, ours: ours, theirs: ours) == .merged(ours), "case \(caseIndex)")
            #expect(LineMerge.merge(base: base, ours: base, theirs: theirs) == .merged(theirs), "case \(caseIndex)")
            if case .merged(let bytes) = result {
                mergedCount += 1
                #expect(LineMerge.merge(base: base, ours: bytes, theirs: bytes) == .merged(bytes), "case \(caseIndex)")
            }
        }
        #expect(mergedCount > 0)
    }

    /// The diff underneath: hunks rebuild the side from the base, and (below the cost cut-off) keep a longest common
    /// subsequence, checked against a quadratic dynamic programme on small random inputs.
    @Test func diffIsMinimalAndReconstructs() {
        var random = SplitMix64(seed: 42)
        for caseIndex in 0..<500 {
            let classCount = 1 + random.below(5)
            let base = (0..<random.below(40)).map { _ in random.below(classCount) }
            var side = base
            for _ in 0..<random.below(6) {
                let start = random.below(side.count + 1)
                let end = min(side.count, start + random.below(5))
                side.replaceSubrange(start..<end, with: (0..<random.below(4)).map { _ in random.below(classCount) })
            }
            if random.below(4) == 0 { side = (0..<random.below(40)).map { _ in random.below(classCount) } }

            let hunks = LineMerge.Differ.hunks(base: base, side: side, classCount: classCount)
            #expect(Self.apply(hunks, base: base, side: side) == side, "case \(caseIndex)")
            let kept = base.count - hunks.reduce(0) { $0 + $1.baseEnd - $1.baseStart }
            #expect(kept == Self.lcsLength(base, side), "case \(caseIndex)")
            // Separated hunks in base order.
            for (first, second) in zip(hunks, hunks.dropFirst()) {
                #expect(first.baseEnd < second.baseStart && first.sideEnd < second.sideStart, "case \(caseIndex)")
            }

            // The cost cut-off may give up minimality, never correctness.
            let rough = LineMerge.Differ.hunks(base: base, side: side, classCount: classCount, costLimit: 1)
            #expect(Self.apply(rough, base: base, side: side) == side, "case \(caseIndex)")
        }
    }

    private static func apply(_ hunks: [LineMerge.Hunk], base: [Int], side: [Int]) -> [Int]? {
        var result: [Int] = []
        var position = 0
        var sidePosition = 0
        for hunk in hunks {
            guard position <= hunk.baseStart, hunk.baseStart <= hunk.baseEnd, hunk.baseEnd <= base.count,
                hunk.sideStart <= hunk.sideEnd, hunk.sideEnd <= side.count,
                hunk.sideStart - sidePosition == hunk.baseStart - position
            else { return nil }
            result += base[position..<hunk.baseStart]
            result += side[hunk.sideStart..<hunk.sideEnd]
            position = hunk.baseEnd
            sidePosition = hunk.sideEnd
        }
        result += base[position...]
        return result
    }

    private static func lcsLength(_ x: [Int], _ y: [Int]) -> Int {
        var previous = [Int](repeating: 0, count: y.count + 1)
        for a in x {
            var current = [Int](repeating: 0, count: y.count + 1)
            for (j, b) in y.enumerated() {
                current[j + 1] = a == b ? previous[j] + 1 : max(previous[j + 1], current[j])
            }
            previous = current
        }
        return previous[y.count]
    }
}

// MARK: - Test support

/// A base of distinct lines and two sets of edits to it that neither overlap nor touch.
private struct EditScenario {
    enum Side {
        case ours, theirs
    }

    struct Edit {
        var side: Side
        /// Base lines `start..<end` are replaced by `lines`.
        var start: Int
        var end: Int
        var lines: [[UInt8]]
    }

    var baseLines: [[UInt8]]
    var edits: [Edit]

    func apply(sides: Set<Side>) -> [UInt8] {
        var bytes: [UInt8] = []
        var position = 0
        for edit in edits where sides.contains(edit.side) {
            for line in baseLines[position..<edit.start] { bytes += line }
            for line in edit.lines { bytes += line }
            position = edit.end
        }
        for line in baseLines[position...] { bytes += line }
        return bytes
    }

    static func random(_ random: inout SplitMix64, caseIndex: Int) -> EditScenario {
        func payload() -> [UInt8] {
            // Arbitrary bytes except the newline, including invalid UTF-8 and "\r".
            (0..<random.below(8)).map { _ in
                let byte = UInt8(truncatingIfNeeded: random.next())
                return byte == 0x0A ? 0x0D : byte
            }
        }
        let count = random.below(4) == 0 ? random.below(150) : random.below(25)
        var baseLines: [[UInt8]] = (0..<count).map { Array("L\(caseIndex).\($0):".utf8) + payload() + [0x0A] }
        let lastIsUnterminated = count > 0 && random.below(5) == 0
        if lastIsUnterminated { baseLines[count - 1].removeLast() }

        var edits: [Edit] = []
        var fresh = 0
        var position = 0
        while position <= count {
            // Nothing can be inserted after an unterminated last line without changing that line.
            if position == count && lastIsUnterminated { break }
            guard random.below(3) == 0 else {
                position += 1
                continue
            }
            let length = random.below(min(3, count - position) + 1)
            var newCount = random.below(4)
            if length == 0 && newCount == 0 { newCount = 1 }
            let lines: [[UInt8]] = (0..<newCount).map { _ in
                fresh += 1
                return Array("N\(fresh):".utf8) + payload() + [0x0A]
            }
            let side: Side = random.below(2) == 0 ? .ours : .theirs
            edits.append(Edit(side: side, start: position, end: position + length, lines: lines))
            // At least one untouched base line before the next edit of either side.
            position += length + 1
        }
        return EditScenario(baseLines: baseLines, edits: edits)
    }
}
