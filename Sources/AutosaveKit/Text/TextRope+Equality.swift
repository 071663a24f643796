import FoundationEssentials
import Glibc

extension TextRope: Equatable {
    /// Whether two texts hold the same bytes. Versions of one text share the chunks an edit did
    /// not touch, and those are skipped unread: a buffer one keystroke from its saved version
    /// compares in O(log n), not O(n).
    public static func == (left: TextRope, right: TextRope) -> Bool {
        if left.root === right.root { return true }
        guard left.count == right.count else { return false }
        var leftCursor = ChunkCursor(left.root)
        var rightCursor = ChunkCursor(right.root)
        while !leftCursor.isAtEnd {
            if let (leftLevel, rightLevel) = ChunkCursor.sharedNode(leftCursor, rightCursor) {
                leftCursor.skip(level: leftLevel)
                rightCursor.skip(level: rightLevel)
                continue
            }
            let leftChunk = leftCursor.remainingInLeaf
            let rightChunk = rightCursor.remainingInLeaf
            let length = min(leftChunk.count, rightChunk.count)
            let same = leftChunk.withUnsafeBufferPointer { a in
                rightChunk.withUnsafeBufferPointer { b in memcmp(a.baseAddress!, b.baseAddress!, length) == 0 }
            }
            guard same else { return false }
            leftCursor.advance(by: length)
            rightCursor.advance(by: length)
        }
        return true
    }
}

/// A position in a rope's leaves, walking forward, that knows which whole nodes start where it
/// stands, so that a comparison can step over a node both texts share.
private struct ChunkCursor {
    /// The inner nodes down to the current leaf, each with the index of the child taken.
    private var path: [(node: RopeNode, index: Int)] = []
    private var leaf: RopeNode?
    private var offsetInLeaf = 0

    init(_ root: RopeNode) { descend(to: root) }

    var isAtEnd: Bool { leaf == nil }

    /// The rest of the current leaf.
    var remainingInLeaf: ArraySlice<UInt8> {
        let bytes = leaf!.bytes
        return bytes[(bytes.startIndex + offsetInLeaf)...]
    }

    /// The nodes that start exactly here, as (level in `path`, node), the leaf's level being
    /// `path.count`.
    private var nodesStartingHere: [(level: Int, node: RopeNode)] {
        guard offsetInLeaf == 0, let leaf else { return [] }
        var nodes = [(path.count, leaf)]
        var level = path.count - 1
        while level >= 0, path[level].index == 0 {
            nodes.append((level, path[level].node))
            level -= 1
        }
        return nodes
    }

    /// The levels of the highest node that both cursors stand at the start of, if any.
    static func sharedNode(_ left: ChunkCursor, _ right: ChunkCursor) -> (Int, Int)? {
        let rights = right.nodesStartingHere
        guard !rights.isEmpty else { return nil }
        for (leftLevel, leftNode) in left.nodesStartingHere.reversed() {
            if let match = rights.last(where: { $0.node === leftNode }) { return (leftLevel, match.level) }
        }
        return nil
    }

    /// Steps over the node at `level` (which starts here).
    mutating func skip(level: Int) {
        path.removeSubrange(level...)
        nextLeaf()
    }

    mutating func advance(by length: Int) {
        offsetInLeaf += length
        if offsetInLeaf == leaf!.count { nextLeaf() }
    }

    private mutating func nextLeaf() {
        while let last = path.last {
            if last.index + 1 < last.node.children.count {
                path[path.count - 1].index += 1
                descend(to: last.node.children[last.index + 1])
                return
            }
            path.removeLast()
        }
        leaf = nil
    }

    private mutating func descend(to node: RopeNode) {
        var node = node
        while !node.isLeaf {
            path.append((node, 0))
            node = node.children[0]
        }
        leaf = node
        offsetInLeaf = 0
        // Only an empty text has an empty leaf.
        if node.count == 0 { leaf = nil }
    }
}
