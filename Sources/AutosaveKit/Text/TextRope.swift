/// A buffer's text: bytes in a balanced tree of chunks, so that an edit costs O(log n + its
/// size) rather than a copy of the file, and a version of the text costs one reference.
///
/// Built from an array, the rope's chunks are slices of that array (no copy). Versions share
/// every chunk an edit did not touch, so a buffer, its last saved version and the journal's
/// record of it hold one text between them. Reading it whole (`bytes`) is one copy.
public struct TextRope: Sendable {
    let root: RopeNode

    /// An empty text.
    public init() { root = RopeNode(leaf: []) }

    /// The text of `bytes`, sharing their storage.
    public init(_ bytes: [UInt8]) { self.init(bytes[...]) }

    /// The text of `bytes`, sharing their storage.
    public init(_ bytes: ArraySlice<UInt8>) {
        root = RopeNode.tree(of: RopeNode.leaves(of: bytes)) ?? RopeNode(leaf: [])
    }

    init(root: RopeNode) { self.root = root }

    /// Bytes in the text.
    public var count: Int { root.count }
    public var isEmpty: Bool { root.count == 0 }
    /// Lines in the text: line breaks + 1 (an empty text, or one ending in a break, ends with an
    /// empty line, as LSP counts them).
    public var lineCount: Int { root.summary.breaks + 1 }

    /// The whole text, in one copy.
    public var bytes: [UInt8] {
        [UInt8](unsafeUninitializedCapacity: count) { storage, initialized in
            var offset = 0
            forEachChunk { chunk in
                _ = UnsafeMutableBufferPointer(rebasing: storage[offset..<(offset + chunk.count)]).initialize(from: chunk)
                offset += chunk.count
            }
            initialized = offset
        }
    }

    /// Bytes `range` of the text, in one copy: O(log n + range's length).
    public func bytes(in range: Range<Int>) -> [UInt8] {
        precondition(range.lowerBound >= 0 && range.upperBound <= count, "range outside the text")
        var result: [UInt8] = []
        result.reserveCapacity(range.count)
        forEachChunk(in: range) { result.append(contentsOf: $0) }
        return result
    }

    /// Calls `body` with each chunk of the text, in order.
    public func forEachChunk(_ body: (UnsafeBufferPointer<UInt8>) throws -> Void) rethrows {
        try forEachChunk(in: 0..<count, body)
    }

    /// Calls `body` with the chunks covering `range`, in order, cut to it: O(log n + chunks).
    public func forEachChunk(in range: Range<Int>, _ body: (UnsafeBufferPointer<UInt8>) throws -> Void) rethrows {
        guard !range.isEmpty else { return }
        try Self.visit(root, from: range.lowerBound, to: range.upperBound, body)
    }

    private static func visit(
        _ node: RopeNode, from start: Int, to end: Int, _ body: (UnsafeBufferPointer<UInt8>) throws -> Void
    ) rethrows {
        if node.isLeaf {
            let from = node.bytes.startIndex + start
            try node.bytes[from..<(node.bytes.startIndex + end)].withUnsafeBufferPointer(body)
            return
        }
        var offset = 0
        for child in node.children {
            let childEnd = offset + child.count
            if childEnd > start {
                try visit(child, from: max(start - offset, 0), to: min(end - offset, child.count), body)
            }
            offset = childEnd
            if offset >= end { return }
        }
    }

    /// The text with `splices` (in text order, not overlapping, within it) applied: O(splices ×
    /// log n + their bytes).
    public func applying(_ splices: [ByteSplice]) -> TextRope {
        var text = self
        // From the end, so each splice's offsets still mean what they meant before the others.
        for splice in splices.reversed() {
            text = text.replacing(splice.start..<splice.end, with: splice.text[...])
        }
        return text
    }

    /// The text with bytes `range` replaced by `replacement`.
    public func replacing(_ range: Range<Int>, with replacement: ArraySlice<UInt8>) -> TextRope {
        precondition(range.lowerBound >= 0 && range.upperBound <= count, "range outside the text")
        guard !range.isEmpty || !replacement.isEmpty else { return self }
        let nodes = Self.replace(
            in: root, from: range.lowerBound, to: range.upperBound, inserting: replacement.isEmpty ? nil : replacement)
        return TextRope(root: RopeNode.tree(of: nodes) ?? RopeNode(leaf: []))
    }

    /// `node` with bytes `start..<end` replaced by `insert` (nil: insert nothing), as zero or more
    /// nodes of `node`'s height. Only the nodes on the way to the range are made anew.
    private static func replace(in node: RopeNode, from start: Int, to end: Int, inserting insert: ArraySlice<UInt8>?) -> [RopeNode] {
        if node.isLeaf {
            let bytes = node.bytes
            var edited: [UInt8] = []
            edited.reserveCapacity(bytes.count - (end - start) + (insert?.count ?? 0))
            edited += bytes[bytes.startIndex..<(bytes.startIndex + start)]
            if let insert { edited += insert }
            edited += bytes[(bytes.startIndex + end)...]
            return RopeNode.leaves(of: edited[...])
        }
        let children = node.children
        // The insert goes into the child the range starts in; at a seam, the one before it.
        var first = 0
        var firstOffset = 0
        while first < children.count - 1, start > firstOffset + children[first].count {
            firstOffset += children[first].count
            first += 1
        }
        var last = first
        var offset = firstOffset + children[first].count
        while end > start, last + 1 < children.count, offset < end {
            last += 1
            offset += children[last].count
        }
        var replaced: [RopeNode] = []
        offset = firstOffset
        for index in first...last {
            let child = children[index]
            let from = max(start - offset, 0)
            let to = min(end - offset, child.count)
            let childInsert = index == first ? insert : nil
            if childInsert == nil, from == 0, to == child.count {
                // Wholly removed.
            } else if childInsert == nil, from == to {
                replaced.append(child)
            } else {
                replaced += replace(in: child, from: from, to: to, inserting: childInsert)
            }
            offset += child.count
        }
        var result = Array(children[..<first])
        result += replaced
        result += children[(last + 1)...]
        // Underfull nodes come only from this edit: join them to a neighbour where one fits.
        var index = max(first - 1, 0)
        var lastChanged = min(first + replaced.count, result.count - 1)
        while index < lastChanged {
            if let joined = RopeNode.joined(result[index], result[index + 1]) {
                result[index] = joined
                result.remove(at: index + 1)
                lastChanged -= 1
            } else {
                index += 1
            }
        }
        guard !result.isEmpty else { return [] }
        return result.count <= RopeNode.maxChildren ? [RopeNode(children: result)] : RopeNode.parents(of: result)
    }
}
