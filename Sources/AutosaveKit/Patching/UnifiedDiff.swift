import ByteNames

/// A unified diff (`git diff`, `diff -u`, or what a coding agent writes), read into the changes
/// it makes to each file.
public struct UnifiedDiff: Sendable, Equatable {
    /// The changes to one file.
    public struct FilePatch: Sendable, Equatable {
        /// The path before (nil for a file the patch creates), without git's `a/`.
        public var oldPath: String?
        /// The path after (nil for a file the patch deletes), without git's `b/`.
        public var newPath: String?
        public var hunks: [Hunk]

        /// The file the patch changes: its new path, or the old one for a deletion.
        public var path: String { newPath ?? oldPath ?? "" }
    }

    /// One `@@ -a,b +c,d @@` block: lines that must be there, and what replaces them.
    public struct Hunk: Sendable, Equatable {
        /// The header line as written, to name the hunk in messages.
        public var header: String
        /// 1-based first line of the old text (for an empty old side: the line after which to insert).
        public var oldStart: Int
        public var oldCount: Int
        /// The lines the old text must have here (context and removed), with their line breaks.
        public var oldLines: [[UInt8]]
        /// The lines that replace them (context and added), with their line breaks.
        public var newLines: [[UInt8]]
    }

    public var files: [FilePatch]

    /// Why a patch could not be read. Nothing was applied.
    public enum ParseError: Error, Equatable, Sendable, CustomStringConvertible {
        /// A hunk before any `---`/`+++` pair names its file.
        case hunkWithoutFile(line: Int)
        /// A `@@` line that is not `@@ -a[,b] +c[,d] @@`.
        case badHunkHeader(line: Int, String)
        /// A line inside a hunk that is not ` `, `-`, `+` or `\`, or a hunk cut short.
        case badHunkLine(line: Int, String)
        /// No file is changed by it at all.
        case empty
        /// `ifRevision` was given for a patch of several files.
        case ifRevisionNeedsOneFile(files: Int)

        public var description: String {
            switch self {
            case .hunkWithoutFile(let line): "line \(line) of the patch: a hunk before any `--- FILE` / `+++ FILE` lines"
            case .badHunkHeader(let line, let text): "line \(line) of the patch: `\(text)` is not a hunk header `@@ -a,b +c,d @@`"
            case .badHunkLine(let line, let text):
                "line \(line) of the patch: `\(text)` does not belong in a hunk (lines start with ' ', '-', '+' or '\\'; is the hunk's line count right?)"
            case .empty: "the patch changes no file (no `--- FILE` / `+++ FILE` with hunks)"
            case .ifRevisionNeedsOneFile(let files): "ifRevision names one file's revision, but the patch changes \(files) files"
            }
        }
    }

    /// Reads `patch`.
    ///
    /// - Throws: `ParseError` naming the line of the patch at fault.
    public init(parsing patch: [UInt8]) throws(ParseError) {
        let lines = Self.lines(of: patch)
        var files: [FilePatch] = []
        var index = 0
        func text(_ line: [UInt8]) -> String { String(decoding: line.prefix { $0 != 10 && $0 != 13 }, as: UTF8.self) }
        while index < lines.count {
            let line = lines[index]
            if line.starts(with: Array("--- ".utf8)), index + 1 < lines.count, lines[index + 1].starts(with: Array("+++ ".utf8)) {
                files.append(FilePatch(
                    oldPath: Self.path(text(line).dropFirst(4), prefix: "a/"),
                    newPath: Self.path(text(lines[index + 1]).dropFirst(4), prefix: "b/"), hunks: []))
                index += 2
                continue
            }
            guard line.starts(with: Array("@@ ".utf8)) else {
                // `diff --git`, `index`, mode lines and any prose around the diff.
                index += 1
                continue
            }
            guard !files.isEmpty else { throw .hunkWithoutFile(line: index + 1) }
            guard let (oldStart, oldCount, newCount) = Self.header(text(line)) else {
                throw .badHunkHeader(line: index + 1, text(line))
            }
            var hunk = Hunk(header: text(line), oldStart: oldStart, oldCount: oldCount, oldLines: [], newLines: [])
            index += 1
            var lastSide = 0  // 1 old, 2 new, 3 both: where a `\ No newline` marker applies
            while hunk.oldLines.count < oldCount || hunk.newLines.count < newCount || (index < lines.count && lines[index].first == UInt8(ascii: "\\")) {
                guard index < lines.count else { throw .badHunkLine(line: index + 1, "(end of the patch)") }
                let body = Array(lines[index].dropFirst())
                switch lines[index].first {
                case UInt8(ascii: " "):
                    hunk.oldLines.append(body)
                    hunk.newLines.append(body)
                    lastSide = 3
                case UInt8(ascii: "-"):
                    hunk.oldLines.append(body)
                    lastSide = 1
                case UInt8(ascii: "+"):
                    hunk.newLines.append(body)
                    lastSide = 2
                case UInt8(ascii: "\\"):
                    // "\ No newline at end of file": the line before it has no line break.
                    if lastSide & 1 != 0, let last = hunk.oldLines.popLast() { hunk.oldLines.append(Self.withoutLineBreak(last)) }
                    if lastSide & 2 != 0, let last = hunk.newLines.popLast() { hunk.newLines.append(Self.withoutLineBreak(last)) }
                case UInt8(ascii: "\n"), UInt8(ascii: "\r"):
                    // An empty context line whose leading space an editor or mailer trimmed.
                    hunk.oldLines.append(lines[index])
                    hunk.newLines.append(lines[index])
                    lastSide = 3
                default:
                    throw .badHunkLine(line: index + 1, text(lines[index]))
                }
                index += 1
                guard hunk.oldLines.count <= oldCount, hunk.newLines.count <= newCount else {
                    throw .badHunkLine(line: index, text(lines[index - 1]))
                }
            }
            files[files.count - 1].hunks.append(hunk)
            // A change line right after a hunk whose counts are met is one the header does not
            // count: applying the hunk without it would silently drop part of the change.
            if index < lines.count, let first = lines[index].first, first == UInt8(ascii: "+") || first == UInt8(ascii: "-"),
                !lines[index].starts(with: Array("--- ".utf8))
            {
                throw .badHunkLine(line: index + 1, text(lines[index]))
            }
        }
        files.removeAll { $0.hunks.isEmpty && !($0.oldPath == nil || $0.newPath == nil) }
        guard !files.isEmpty else { throw .empty }
        self.files = files
    }

    /// The lines of `text`, each with its line break (`\n` or `\r\n`).
    static func lines(of text: [UInt8]) -> [[UInt8]] {
        var lines: [[UInt8]] = []
        var start = 0
        for (offset, byte) in text.enumerated() where byte == UInt8(ascii: "\n") {
            lines.append(Array(text[start...offset]))
            start = offset + 1
        }
        if start < text.count { lines.append(Array(text[start...])) }
        return lines
    }

    /// The line without its `\n`. A `\r` before it stays: `diff -u` of a file whose last line
    /// ends in a bare `\r` writes that `\r`, then the `\n` every patch line has, then the marker.
    private static func withoutLineBreak(_ line: [UInt8]) -> [UInt8] {
        var line = line
        if line.last == UInt8(ascii: "\n") { line.removeLast() }
        return line
    }

    /// A `---`/`+++` path: nil for `/dev/null`; without a tab and what follows (diff -u's
    /// timestamp) and without git's prefix.
    /// Read as bytes: the name is the file's, and `\t` or `/` followed by a combining mark is
    /// one `Character` to Swift but two bytes to the file system.
    private static func path(_ raw: Substring, prefix: String) -> String? {
        var bytes = raw.utf8.prefix { $0 != UInt8(ascii: "\t") }
        while let last = bytes.last, last == UInt8(ascii: " ") || last == UInt8(ascii: "\r") { bytes = bytes.dropLast() }
        let path = String(decoding: bytes, as: UTF8.self)
        if path.isSameName(as: "/dev/null") { return nil }
        return path.hasBytePrefix(prefix) ? String(decoding: bytes.dropFirst(prefix.utf8.count), as: UTF8.self) : path
    }

    /// `@@ -a[,b] +c[,d] @@…` → (a, b, d); an absent count is 1.
    private static func header(_ line: String) -> (Int, Int, Int)? {
        let parts = line.split(separator: " ")
        guard parts.count >= 4, parts[0] == "@@", parts[3].hasPrefix("@@"), parts[1].hasPrefix("-"), parts[2].hasPrefix("+") else { return nil }
        func range(_ part: Substring) -> (Int, Int)? {
            let numbers = part.dropFirst().split(separator: ",", omittingEmptySubsequences: false)
            guard let start = Int(numbers[0]), start >= 0 else { return nil }
            guard numbers.count > 1 else { return (start, 1) }
            guard numbers.count == 2, let count = Int(numbers[1]), count >= 0 else { return nil }
            return (start, count)
        }
        guard let old = range(parts[1]), let new = range(parts[2]) else { return nil }
        return (old.0, old.1, new.1)
    }
}
