extension TextRope {
    /// The offset where line `line` (zero-based) starts: O(log n + a chunk).
    ///
    /// - Precondition: `0 <= line < lineCount`.
    public func lineStart(_ line: Int) -> Int {
        precondition(line >= 0 && line < lineCount, "no line \(line) in a text of \(lineCount)")
        guard line > 0 else { return 0 }
        return Self.offset(afterBreak: line, in: root)
    }

    /// The offset just past break number `number` (one-based) of `node`, a break that the node's
    /// parent counts as one (so never a `\r` whose `\n` starts the next node).
    private static func offset(afterBreak number: Int, in node: RopeNode) -> Int {
        if node.isLeaf {
            return node.bytes.withUnsafeBufferPointer { bytes in
                var seen = 0
                for index in bytes.indices {
                    let byte = bytes[index]
                    let isBreak = byte == TextSummary.lineFeed
                        || (byte == TextSummary.carriageReturn && (index + 1 == bytes.count || bytes[index + 1] != TextSummary.lineFeed))
                    if isBreak {
                        seen += 1
                        if seen == number { return index + 1 }
                    }
                }
                preconditionFailure("a leaf counted breaks it does not hold")
            }
        }
        var remaining = number
        var offset = 0
        let children = node.children
        for index in children.indices {
            let child = children[index]
            var breaks = child.summary.breaks
            // A `\r` ending this child and the `\n` starting the next are one break, the `\n`'s.
            if child.summary.endsWithCarriageReturn, index + 1 < children.count, children[index + 1].summary.startsWithLineFeed {
                breaks -= 1
            }
            if remaining <= breaks { return offset + Self.offset(afterBreak: remaining, in: child) }
            remaining -= breaks
            offset += child.count
        }
        preconditionFailure("a node counted breaks its children do not hold")
    }

    /// The bytes of line `line` from its start, up to its break or the end of the text, at most
    /// `limit` of them.
    func lineBytes(_ line: Int, limit: Int = .max) -> (start: Int, bytes: [UInt8]) {
        let start = lineStart(line)
        var bytes: [UInt8] = []
        var isDone = false
        forEachChunk(in: start..<(start + min(limit, count - start))) { chunk in
            guard !isDone else { return }
            if let end = chunk.firstIndex(where: { $0 == TextSummary.lineFeed || $0 == TextSummary.carriageReturn }) {
                bytes += chunk[..<end]
                isDone = true
            } else {
                bytes += chunk
            }
        }
        return (start, bytes)
    }
}

extension TextRope {
    /// Lines as a patch counts them: ended by `\n` alone, the last one possibly without it.
    var patchLineCount: Int {
        let feeds = root.summary.lineFeeds
        return feeds + (count > patchLineStart(feeds) ? 1 : 0)
    }

    /// Where patch line `line` starts (the text's end past the last): O(log n).
    func patchLineStart(_ line: Int) -> Int {
        guard line > 0 else { return 0 }
        guard line <= root.summary.lineFeeds else { return count }
        var node = root
        var remaining = line
        var offset = 0
        while !node.isLeaf {
            for child in node.children {
                if remaining <= child.summary.lineFeeds {
                    node = child
                    break
                }
                remaining -= child.summary.lineFeeds
                offset += child.count
            }
        }
        return node.bytes.withUnsafeBufferPointer { bytes in
            var seen = 0
            for index in bytes.indices where bytes[index] == TextSummary.lineFeed {
                seen += 1
                if seen == remaining { return offset + index + 1 }
            }
            preconditionFailure("a leaf counted line feeds it does not hold")
        }
    }
}
