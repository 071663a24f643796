/// One node of a `TextRope`: a leaf holding a chunk of bytes, or an inner node holding 1 to
/// `maxChildren` nodes one level down. Immutable, so versions of a text share every node an
/// edit did not touch, and a snapshot costs one reference.
final class RopeNode: Sendable {
    let summary: TextSummary
    /// Nodes one level down, in text order; empty for a leaf.
    let children: [RopeNode]
    /// A leaf's bytes; often a slice of the file as read, shared rather than copied.
    let bytes: ArraySlice<UInt8>
    /// 0 for a leaf; every child of a node is one level lower.
    let height: Int

    /// Chunks are cut at this size when a text is built or a long insert is split.
    static let leafSize = 4096
    /// A leaf grown past this by edits is split.
    static let maxLeaf = 8192
    /// A leaf shrunk below this is joined to a neighbour when the two fit in `maxLeaf`.
    static let minLeaf = 1024
    static let maxChildren = 16
    /// A node with fewer children is joined to a neighbour when the two fit in `maxChildren`.
    static let minChildren = 4

    init(leaf bytes: ArraySlice<UInt8>) {
        self.bytes = bytes
        self.children = []
        self.height = 0
        self.summary = bytes.withUnsafeBufferPointer { TextSummary($0) }
    }

    init(children: [RopeNode]) {
        precondition(!children.isEmpty)
        self.children = children
        self.bytes = []
        self.height = children[0].height + 1
        var summary = TextSummary()
        for child in children { summary = summary + child.summary }
        self.summary = summary
    }

    var isLeaf: Bool { height == 0 }
    var count: Int { summary.count }

    /// `bytes` cut into leaves of about `leafSize` (one leaf when it fits in `maxLeaf`, none when
    /// empty). The leaves share `bytes`' storage.
    static func leaves(of bytes: ArraySlice<UInt8>) -> [RopeNode] {
        guard !bytes.isEmpty else { return [] }
        guard bytes.count > maxLeaf else { return [RopeNode(leaf: bytes)] }
        let pieces = (bytes.count + leafSize - 1) / leafSize
        var leaves: [RopeNode] = []
        leaves.reserveCapacity(pieces)
        var start = bytes.startIndex
        for piece in 0..<pieces {
            let end = bytes.startIndex + bytes.count * (piece + 1) / pieces
            leaves.append(RopeNode(leaf: bytes[start..<end]))
            start = end
        }
        return leaves
    }

    /// `nodes` (all of one height) under as few parents as hold them, the parents evenly filled.
    static func parents(of nodes: [RopeNode]) -> [RopeNode] {
        guard !nodes.isEmpty else { return [] }
        let groups = (nodes.count + maxChildren - 1) / maxChildren
        var parents: [RopeNode] = []
        parents.reserveCapacity(groups)
        var start = 0
        for group in 0..<groups {
            let end = nodes.count * (group + 1) / groups
            parents.append(RopeNode(children: Array(nodes[start..<end])))
            start = end
        }
        return parents
    }

    /// One tree over `nodes` (all of one height); nil for none.
    static func tree(of nodes: [RopeNode]) -> RopeNode? {
        var level = nodes
        while level.count > 1 { level = parents(of: level) }
        guard var root = level.first else { return nil }
        while !root.isLeaf, root.children.count == 1 { root = root.children[0] }
        return root
    }

    /// `left` and `right` (neighbours of one height) as one node, when one node holds them both
    /// and either is underfull; nil otherwise.
    static func joined(_ left: RopeNode, _ right: RopeNode) -> RopeNode? {
        if left.isLeaf {
            guard left.count < minLeaf || right.count < minLeaf, left.count + right.count <= maxLeaf else { return nil }
            return RopeNode(leaf: ArraySlice(Array(left.bytes) + right.bytes))
        }
        guard left.children.count < minChildren || right.children.count < minChildren,
            left.children.count + right.children.count <= maxChildren
        else { return nil }
        var children = left.children + right.children
        // The two children meeting at the seam may be underfull too (a long delete leaves a thin
        // edge on each side): join them as well, down to the leaves.
        let seam = left.children.count - 1
        if let seamJoined = joined(children[seam], children[seam + 1]) {
            children[seam] = seamJoined
            children.remove(at: seam + 1)
        }
        return RopeNode(children: children)
    }
}
