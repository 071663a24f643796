/// Why a patch was refused. No buffer was changed.
public enum PatchError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The patch could not be read.
    case unreadable(UnifiedDiff.ParseError)
    /// A hunk's old lines are nowhere in the file (after the hunks before it). `line` is where
    /// the hunk said they are (1-based), `expected` the first line that differs there, `found`
    /// what the file has instead (nil past its end).
    case hunkDoesNotApply(path: String, hunk: String, line: Int, expected: String, found: String?)
    /// The patch creates a file that exists.
    case fileExists(path: String)
    /// The patch changes or deletes a file that does not exist.
    case noSuchFile(path: String)
    /// The patch renames a file; renames are left to git.
    case renames(from: String, to: String)
    /// The patch names the same file twice.
    case sameFileTwice(path: String)
    /// The patch deletes a file, but its hunks do not remove all of its text.
    case deletionLeavesText(path: String, bytes: Int)

    /// The file at fault, when there is one.
    public var path: String? {
        switch self {
        case .unreadable: nil
        case .hunkDoesNotApply(let path, _, _, _, _), .fileExists(let path), .noSuchFile(let path), .sameFileTwice(let path),
            .deletionLeavesText(let path, _):
            path
        case .renames(let from, _): from
        }
    }

    public var description: String {
        switch self {
        case .unreadable(let error): "\(error); nothing was changed"
        case .hunkDoesNotApply(let path, let hunk, let line, let expected, let found):
            "\(path): hunk \(hunk) does not apply: line \(line) should be `\(expected)` but "
                + (found.map { "is `\($0)`" } ?? "the file ends before it") + "; nothing was changed"
        case .fileExists(let path): "\(path): the patch creates it, but it exists; nothing was changed"
        case .noSuchFile(let path): "\(path): the patch changes it, but there is no such file; nothing was changed"
        case .renames(let from, let to): "the patch renames \(from) to \(to); renames are not applied here (use git); nothing was changed"
        case .sameFileTwice(let path): "the patch names \(path) twice; nothing was changed"
        case .deletionLeavesText(let path, let bytes):
            "the patch deletes \(path), but \(bytes) bytes of it are not in the patch (is it the file the patch was made from?); nothing was changed"
        }
    }
}

/// Finds where each hunk of a file's patch belongs in its text and makes the new text.
///
/// A hunk goes where its header says, or, when the file has moved on since the diff was made,
/// at the nearest place where its old lines are all there (as `patch` does, with no fuzz): never
/// before the hunk before it, and never by guessing at lines that differ.
public enum HunkPlacement {
    /// `text` with `hunks` applied.
    ///
    /// - Throws: `PatchError.hunkDoesNotApply` for the first hunk whose old lines are nowhere.
    public static func apply(_ hunks: [UnifiedDiff.Hunk], to text: [UInt8], path: String) throws(PatchError) -> [UInt8] {
        ByteSplice.apply(try splices(hunks, in: TextLines(text), path: path), to: text)
    }

    /// The hunks as splices of `text`, in text order.
    ///
    /// When every hunk is where its header says (a patch made from this very text, the usual
    /// case), that is checked on the rope line by line: O(hunks × (log n + their size)). Only a
    /// patch made from an older text pays for the search, over all of the text's lines.
    ///
    /// - Throws: `PatchError.hunkDoesNotApply` for the first hunk whose old lines are nowhere.
    public static func splices(_ hunks: [UnifiedDiff.Hunk], in text: TextRope, path: String) throws(PatchError) -> [ByteSplice] {
        if let splices = splicesAsStated(hunks, in: text) { return splices }
        return try splices(hunks, in: TextLines(text.bytes), path: path)
    }

    /// The splices when each hunk's old lines are exactly at its stated line; nil otherwise.
    private static func splicesAsStated(_ hunks: [UnifiedDiff.Hunk], in text: TextRope) -> [ByteSplice]? {
        let lineCount = text.patchLineCount
        var splices: [ByteSplice] = []
        var next = 0
        for hunk in hunks {
            let stated = statedLine(of: hunk)
            let at = hunk.oldLines.isEmpty ? min(max(stated, next), lineCount) : stated
            guard at >= next, at + hunk.oldLines.count <= lineCount else { return nil }
            let start = text.patchLineStart(at)
            let end = text.patchLineStart(at + hunk.oldLines.count)
            let old = hunk.oldLines.joined()
            guard end - start == old.count, text.bytes(in: start..<end).elementsEqual(old) else { return nil }
            splices.append(ByteSplice(start: start, end: end, text: Array(hunk.newLines.joined())))
            next = at + hunk.oldLines.count
        }
        return splices
    }

    /// The line a hunk says its old lines start at (an empty old side inserts after `oldStart`).
    private static func statedLine(of hunk: UnifiedDiff.Hunk) -> Int {
        hunk.oldCount == 0 ? hunk.oldStart : max(0, hunk.oldStart - 1)
    }

    private static func splices(_ hunks: [UnifiedDiff.Hunk], in lines: TextLines, path: String) throws(PatchError) -> [ByteSplice] {
        var splices: [ByteSplice] = []
        var next = 0
        for hunk in hunks {
            let stated = statedLine(of: hunk)
            guard let at = place(hunk.oldLines, in: lines, near: stated, notBefore: next) else {
                throw mismatch(hunk, in: lines, at: max(stated, next), path: path)
            }
            let splice = ByteSplice(
                start: lines.offset(ofLine: at), end: lines.offset(ofLine: at + hunk.oldLines.count), text: Array(hunk.newLines.joined()))
            splices.append(splice)
            next = at + hunk.oldLines.count
        }
        return splices
    }

    /// The line index nearest `stated` (at or after `minimum`) where `old` matches line for
    /// line. Each place is tried by comparing one hash of its lines, so a hunk costs the
    /// distance searched, not that times its length; only a place whose hash matches is compared
    /// byte by byte.
    static func place(_ old: [[UInt8]], in lines: TextLines, near stated: Int, notBefore minimum: Int) -> Int? {
        let last = lines.count - old.count
        guard last >= minimum else { return nil }
        // A header may name any line (a billion, in a hostile patch): the search starts at the
        // nearest place a hunk can be and goes no further than the text, both ways.
        let nearest = min(max(stated, minimum), last)
        guard !old.isEmpty else { return nearest }
        let wanted = TextLines.windowHash(old.map(TextLines.hash))
        let power = TextLines.power(old.count)
        func matches(_ start: Int) -> Bool {
            lines.windowHash(from: start, count: old.count, power: power) == wanted
                && old.indices.allSatisfy { lines.line(start + $0).elementsEqual(old[$0]) }
        }
        for distance in 0...(last - minimum) {
            for candidate in [nearest - distance, nearest + distance] where candidate >= minimum && candidate <= last {
                if matches(candidate) { return candidate }
            }
            if nearest - distance < minimum && nearest + distance > last { break }
        }
        return nil
    }

    /// The error for a hunk that fits nowhere: the first of its lines that differs where it said it goes.
    private static func mismatch(_ hunk: UnifiedDiff.Hunk, in lines: TextLines, at start: Int, path: String) -> PatchError {
        func text(_ line: some Collection<UInt8>) -> String { String(decoding: line.prefix { $0 != 10 && $0 != 13 }, as: UTF8.self) }
        let differing = hunk.oldLines.indices.first { start + $0 >= lines.count || !lines.line(start + $0).elementsEqual(hunk.oldLines[$0]) } ?? 0
        let found = start + differing < lines.count ? text(lines.line(start + differing)) : nil
        let expected = hunk.oldLines.isEmpty ? "" : text(hunk.oldLines[differing])
        return .hunkDoesNotApply(path: path, hunk: hunk.header, line: start + differing + 1, expected: expected, found: found)
    }
}

/// A text's lines (each with its `\n`) as ranges of it, with a hash per line and prefix hashes,
/// so any run of lines is compared with another in constant time.
struct TextLines {
    let text: [UInt8]
    private var starts: [Int] = []
    /// `prefix[i]`: the polynomial hash of lines 0..<i.
    private var prefix: [UInt64] = [0]

    static let base: UInt64 = 0x0000_0100_0000_01B3

    init(_ text: [UInt8]) {
        self.text = text
        var start = 0
        text.withUnsafeBufferPointer { bytes in
            for offset in bytes.indices where bytes[offset] == UInt8(ascii: "\n") {
                append(start, offset + 1, bytes)
                start = offset + 1
            }
            if start < bytes.count { append(start, bytes.count, bytes) }
        }
    }

    private mutating func append(_ start: Int, _ end: Int, _ bytes: UnsafeBufferPointer<UInt8>) {
        starts.append(start)
        prefix.append(prefix.last! &* Self.base &+ Self.hash(UnsafeBufferPointer(rebasing: bytes[start..<end])))
    }

    var count: Int { starts.count }

    func offset(ofLine index: Int) -> Int { index < starts.count ? starts[index] : text.count }

    func line(_ index: Int) -> ArraySlice<UInt8> { text[offset(ofLine: index)..<offset(ofLine: index + 1)] }

    /// The hash of lines `start..<start + count`; `power` is `power(count)`.
    func windowHash(from start: Int, count: Int, power: UInt64) -> UInt64 {
        prefix[start + count] &- prefix[start] &* power
    }

    static func windowHash(_ hashes: [UInt64]) -> UInt64 { hashes.reduce(0) { $0 &* base &+ $1 } }

    static func power(_ count: Int) -> UInt64 { (0..<count).reduce(1) { value, _ in value &* base } }

    /// One line's hash: the digest that names file versions elsewhere.
    static func hash(_ bytes: some Collection<UInt8>) -> UInt64 { ContentDigest.of(bytes) }
}
