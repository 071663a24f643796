extension UnifiedDiff {
    /// One line of a written diff, and what it is: a terminal colours it by its kind.
    public struct Line: Sendable, Equatable {
        /// What a line of a unified diff is.
        public enum Kind: Sendable, Equatable {
            /// `--- OLD` or `+++ NEW`.
            case fileHeader
            /// `@@ -a,b +c,d @@`.
            case hunkHeader
            /// ` ` and a line both sides have.
            case context
            /// `-` and a line of the old side only.
            case removed
            /// `+` and a line of the new side only.
            case added
            /// `\ No newline at end of file`, after the last line of a side that has no line break.
            case noNewline
        }

        public var kind: Kind
        /// The line as written, with its `\n`.
        public var bytes: [UInt8]

        public init(kind: Kind, bytes: [UInt8]) {
            self.kind = kind
            self.bytes = bytes
        }
    }

    /// Whether `content` is binary as GNU diff and git judge: a NUL among its first 8000 bytes.
    public static func isBinary(_ content: [UInt8]) -> Bool {
        content.prefix(8000).contains(0)
    }

    /// The unified diff that turns `old` into `new`, as `diff -u` writes it: `--- oldLabel`,
    /// `+++ newLabel`, then hunks with `context` unchanged lines around each change (hunks that
    /// close together are one), and `\ No newline at end of file` after a last line without one.
    ///
    /// Lines are bytes, each with its `\n` (a `\r` is just a byte), so GNU `patch` applied to
    /// `old` gives `new` byte for byte. The line diff is `LineMerge`'s Myers diff.
    /// - Returns: no lines when `old` and `new` are equal.
    public static func lines(
        from old: [UInt8], to new: [UInt8], oldLabel: String, newLabel: String, context: Int = 3
    ) -> [Line] {
        guard old != new else { return [] }
        let table = LineMerge.LineTable(base: old, ours: new, theirs: [])
        let hunks = LineMerge.Differ.hunks(base: table.base.ids, side: table.ours.ids, classCount: table.classCount)
        var lines = [
            Line(kind: .fileHeader, bytes: Array("--- \(oldLabel)\n".utf8)),
            Line(kind: .fileHeader, bytes: Array("+++ \(newLabel)\n".utf8)),
        ]
        let context = max(0, context)
        let oldCount = table.base.ids.count
        var first = 0
        while first < hunks.count {
            // Changes at most 2 × context lines apart share their context: one hunk.
            var last = first
            while last + 1 < hunks.count && hunks[last + 1].baseStart - hunks[last].baseEnd <= 2 * context { last += 1 }
            let oldFrom = max(0, hunks[first].baseStart - context)
            let oldTo = min(oldCount, hunks[last].baseEnd + context)
            let newFrom = hunks[first].sideStart - (hunks[first].baseStart - oldFrom)
            let newTo = hunks[last].sideEnd + (oldTo - hunks[last].baseEnd)
            let header = "@@ -\(range(oldFrom, oldTo - oldFrom)) +\(range(newFrom, newTo - newFrom)) @@\n"
            lines.append(Line(kind: .hunkHeader, bytes: Array(header.utf8)))
            var position = oldFrom
            for hunk in hunks[first...last] {
                append(table, table.base, position..<hunk.baseStart, as: .context, to: &lines)
                append(table, table.base, hunk.baseStart..<hunk.baseEnd, as: .removed, to: &lines)
                append(table, table.ours, hunk.sideStart..<hunk.sideEnd, as: .added, to: &lines)
                position = hunk.baseEnd
            }
            append(table, table.base, position..<oldTo, as: .context, to: &lines)
            first = last + 1
        }
        return lines
    }

    /// `a,b` of a hunk header for lines `start..<start + count` (0-based): 1-based, `,1` left out;
    /// for no lines, the line after which they would be.
    private static func range(_ start: Int, _ count: Int) -> String {
        switch count {
        case 0: "\(start),0"
        case 1: "\(start + 1)"
        default: "\(start + 1),\(count)"
        }
    }

    /// Appends lines `range` of `file`, each behind the marker of `kind`.
    private static func append(
        _ table: LineMerge.LineTable, _ file: LineMerge.SplitFile, _ range: Range<Int>, as kind: Line.Kind,
        to lines: inout [Line]
    ) {
        let marker: UInt8 =
            switch kind {
            case .removed: UInt8(ascii: "-")
            case .added: UInt8(ascii: "+")
            default: UInt8(ascii: " ")
            }
        for index in range {
            var bytes = [marker]
            bytes += table.bytes[file.bounds[index]..<file.bounds[index + 1]]
            if bytes.last == UInt8(ascii: "\n") {
                lines.append(Line(kind: kind, bytes: bytes))
            } else {
                // Only a file's last line lacks a line break; a patch says so on a line of its own.
                lines.append(Line(kind: kind, bytes: bytes + [UInt8(ascii: "\n")]))
                lines.append(Line(kind: .noNewline, bytes: Array("\\ No newline at end of file\n".utf8)))
            }
        }
    }
}
