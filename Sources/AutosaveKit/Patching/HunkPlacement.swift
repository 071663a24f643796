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

    /// The file at fault, when there is one.
    public var path: String? {
        switch self {
        case .unreadable: nil
        case .hunkDoesNotApply(let path, _, _, _, _), .fileExists(let path), .noSuchFile(let path), .sameFileTwice(let path): path
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
        let lines = UnifiedDiff.lines(of: text)
        var result: [UInt8] = []
        result.reserveCapacity(text.count)
        var next = 0
        for hunk in hunks {
            // An empty old side inserts after line `oldStart`; otherwise the old lines start there.
            let stated = hunk.oldCount == 0 ? hunk.oldStart : max(0, hunk.oldStart - 1)
            guard let at = place(hunk.oldLines, in: lines, near: stated, notBefore: next) else {
                throw mismatch(hunk, in: lines, at: max(stated, next), path: path)
            }
            for line in lines[next..<at] { result += line }
            for line in hunk.newLines { result += line }
            next = at + hunk.oldLines.count
        }
        for line in lines[next...] { result += line }
        return result
    }

    /// The index nearest `stated` (at or after `minimum`) where `old` matches line for line.
    static func place(_ old: [[UInt8]], in lines: [[UInt8]], near stated: Int, notBefore minimum: Int) -> Int? {
        let last = lines.count - old.count
        guard last >= minimum else { return nil }
        func matches(_ start: Int) -> Bool { old.indices.allSatisfy { lines[start + $0] == old[$0] } }
        // A header may name any line (a billion, in a hostile patch): the search starts at the
        // nearest place a hunk can be and goes no further than the text, both ways.
        let nearest = min(max(stated, minimum), last)
        for distance in 0...(last - minimum) {
            for candidate in [nearest - distance, nearest + distance] where candidate >= minimum && candidate <= last {
                if matches(candidate) { return candidate }
            }
            if nearest - distance < minimum && nearest + distance > last { break }
        }
        return nil
    }

    /// The error for a hunk that fits nowhere: the first of its lines that differs where it said it goes.
    private static func mismatch(_ hunk: UnifiedDiff.Hunk, in lines: [[UInt8]], at start: Int, path: String) -> PatchError {
        func text(_ line: [UInt8]) -> String { String(decoding: line.prefix { $0 != 10 && $0 != 13 }, as: UTF8.self) }
        let differing = hunk.oldLines.indices.first { start + $0 >= lines.count || lines[start + $0] != hunk.oldLines[$0] } ?? 0
        let found = start + differing < lines.count ? text(lines[start + differing]) : nil
        let expected = hunk.oldLines.isEmpty ? "" : text(hunk.oldLines[differing])
        return .hunkDoesNotApply(path: path, hunk: hunk.header, line: start + differing + 1, expected: expected, found: found)
    }
}
