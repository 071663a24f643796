@testable import AutosaveKit
import PropertyBased
import Testing

/// A buffer's text as a rope holds exactly the bytes a plain array would, finds the same lines,
/// and stays a balanced tree that versions share, whatever edits it takes.
@Suite struct TextRopeTests {
    /// Where each line of `bytes` starts, worked out the plain way: after `\n`, after `\r\n`,
    /// after a `\r` not followed by `\n`.
    static func lineStarts(_ bytes: [UInt8]) -> [Int] {
        var starts = [0]
        for (index, byte) in bytes.enumerated() {
            if byte == 10 || (byte == 13 && (index + 1 == bytes.count || bytes[index + 1] != 10)) { starts.append(index + 1) }
        }
        return starts
    }

    /// Text rich in line breaks of every kind, so that `\r\n` pairs land across chunk seams.
    static func text(_ random: inout Xoshiro, count: Int) -> [UInt8] {
        let alphabet: [UInt8] = Array("ab \r\n\r\nxy\n".utf8)
        return (0..<count).map { _ in alphabet[Int(random.next() % UInt64(alphabet.count))] }
    }

    /// What is wrong with the tree's shape, if anything: every leaf at one depth, no node over
    /// its limits, no empty leaf but an empty text's, counts that add up.
    static func shapeProblem(_ node: RopeNode, isRoot: Bool = true) -> String? {
        if node.isLeaf {
            if node.count > RopeNode.maxLeaf { return "a leaf of \(node.count) bytes" }
            if node.count == 0, !isRoot { return "an empty leaf" }
            return nil
        }
        if node.children.count > RopeNode.maxChildren { return "a node of \(node.children.count) children" }
        if isRoot, node.children.count < 2 { return "a root of one child" }
        var sum = TextSummary()
        for child in node.children {
            if child.height != node.height - 1 { return "a child of height \(child.height) under \(node.height)" }
            if let problem = shapeProblem(child, isRoot: false) { return problem }
            sum = sum + child.summary
        }
        return sum == node.summary ? nil : "a summary that is not its children's"
    }

    @Test func randomEditsKeepTheBytesTheLinesAndTheShape() throws {
        var random = Xoshiro(seed: (0x726F_7065, 0x2121_7465, 0x7874_2121, 0x6564_6974))
        for round in 0..<20 {
            var model = Self.text(&random, count: Int(random.next() % 60_000))
            var rope = TextRope(model)
            let versions = [(rope, model)]
            for step in 0..<60 {
                let start = Int(random.next() % UInt64(model.count + 1))
                let removed = Int(random.next() % UInt64(min(model.count - start, step % 7 == 0 ? 30_000 : 40) + 1))
                let inserted = Self.text(&random, count: Int(random.next() % UInt64(step % 9 == 0 ? 20_000 : 12)))
                rope = rope.replacing(start..<(start + removed), with: inserted[...])
                model.replaceSubrange(start..<(start + removed), with: inserted)
                let context = "round \(round), step \(step)"
                #expect(rope.count == model.count, "\(context)")
                if let problem = Self.shapeProblem(rope.root) { Issue.record("\(context): \(problem)") }
                let starts = Self.lineStarts(model)
                #expect(rope.lineCount == starts.count, "\(context)")
                for _ in 0..<5 {
                    let line = Int(random.next() % UInt64(starts.count))
                    #expect(rope.lineStart(line) == starts[line], "\(context), line \(line)")
                }
                if step % 10 == 0 {
                    #expect(rope.bytes == model, "\(context)")
                    #expect(rope == TextRope(model), "\(context): equal to the same bytes built afresh")
                    #expect((rope == versions[0].0) == (model == versions[0].1), "\(context): against the first version")
                }
            }
            #expect(rope.bytes == model)
            let from = Int(random.next() % UInt64(model.count + 1))
            let to = from + Int(random.next() % UInt64(model.count - from + 1))
            #expect(rope.bytes(in: from..<to) == Array(model[from..<to]))
        }
    }

    @Test func splicesApplyAsTheyDoToAnArray() {
        var random = Xoshiro(seed: (1, 2, 3, 4))
        for _ in 0..<200 {
            let model = Self.text(&random, count: Int(random.next() % 30_000))
            var points = (0..<(2 * Int(random.next() % 6))).map { _ in Int(random.next() % UInt64(model.count + 1)) }
            points.sort()
            var splices: [ByteSplice] = []
            for pair in stride(from: 0, to: points.count, by: 2) {
                splices.append(ByteSplice(start: points[pair], end: points[pair + 1], text: Self.text(&random, count: Int(random.next() % 9))))
            }
            #expect(TextRope(model).applying(splices).bytes == ByteSplice.apply(splices, to: model))
        }
    }

    @Test func aOneByteEditSharesEverythingElseAndComparesWithoutReadingIt() {
        let model = [UInt8](repeating: UInt8(ascii: "a"), count: 10 << 20)
        let saved = TextRope(model)
        let edited = saved.replacing(5_000_000..<5_000_001, with: [UInt8(ascii: "b")])
        #expect(edited != saved)
        let undone = edited.replacing(5_000_000..<5_000_001, with: [UInt8(ascii: "a")])
        #expect(undone == saved)
        var leaves = Set<ObjectIdentifier>()
        func collect(_ node: RopeNode) {
            if node.isLeaf { leaves.insert(ObjectIdentifier(node)) } else { node.children.forEach(collect) }
        }
        collect(saved.root)
        var fresh = 0
        func countFresh(_ node: RopeNode) {
            if node.isLeaf { fresh += leaves.contains(ObjectIdentifier(node)) ? 0 : 1 } else { node.children.forEach(countFresh) }
        }
        countFresh(edited.root)
        #expect(fresh == 1, "only the edited chunk is new")
    }

    @Test func theTreeStaysShallowThroughManySmallEditsAndBigDeletes() {
        var random = Xoshiro(seed: (9, 8, 7, 6))
        var model = Self.text(&random, count: 4 << 20)
        var rope = TextRope(model)
        for step in 0..<20_000 {
            let start = Int(random.next() % UInt64(model.count + 1))
            let removed = step % 2 == 0 ? 0 : min(1, model.count - start)
            let inserted: [UInt8] = step % 2 == 0 ? [UInt8(ascii: "k")] : []
            rope = rope.replacing(start..<(start + removed), with: inserted[...])
            model.replaceSubrange(start..<(start + removed), with: inserted)
        }
        #expect(rope.root.height <= 4, "4 MiB in chunks of 4 KiB under nodes of up to 16")
        rope = rope.replacing(1000..<(model.count - 1000), with: [])
        model.replaceSubrange(1000..<(model.count - 1000), with: [])
        #expect(rope.bytes == model)
        #expect(rope.root.height == 0, "what is left fits in one leaf")
        #expect(Self.shapeProblem(rope.root) == nil)
    }

    @Test func anEmptyTextHasOneLineAndTakesEdits() {
        let empty = TextRope()
        #expect(empty.lineCount == 1 && empty.lineStart(0) == 0 && empty.bytes.isEmpty)
        #expect(empty == TextRope([]))
        let crlf = empty.replacing(0..<0, with: Array("\r".utf8)[...]).replacing(1..<1, with: Array("\n".utf8)[...])
        #expect(crlf.lineCount == 2 && crlf.lineStart(1) == 2)
        #expect(crlf.replacing(0..<2, with: []) == empty)
    }
}
