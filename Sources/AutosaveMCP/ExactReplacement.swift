/// A coding agent's exact-text replacement (`old_string` → `new_string`) placed in a text.
///
/// Pure: it finds where the old text is, refuses when it is nowhere or not unique (naming what
/// is nearest, or where each occurrence is), and gives the replacements as byte ranges of the
/// text it was placed in.
public struct ExactReplacement: Sendable, Equatable {
    /// The byte ranges replaced, in order, none overlapping.
    public var ranges: [Range<Int>]
    /// The text with every range replaced.
    public var result: [UInt8]

    /// Why a replacement could not be placed.
    public enum Failure: Error, Equatable {
        /// `old_string` is empty (use `write_file` to write a whole file).
        case emptyOldString
        /// `old_string` and `new_string` are the same: nothing would change.
        case noChange
        /// Nowhere in the text; the line most like its first line, when there is one.
        case notFound(nearestLine: Int?, nearestText: String?)
        /// More than once, and `replace_all` was not asked for: the lines where each starts.
        case ambiguous(lines: [Int])
    }

    /// Places `old` → `new` in `text`: the one occurrence, or every one with `all`.
    public static func place(_ old: [UInt8], _ new: [UInt8], in text: [UInt8], all: Bool) throws(Failure) -> ExactReplacement {
        guard !old.isEmpty else { throw .emptyOldString }
        guard old != new else { throw .noChange }
        let found = occurrences(of: old, in: text)
        if found.isEmpty {
            let nearest = nearestLine(to: old, in: text)
            throw .notFound(nearestLine: nearest?.line, nearestText: nearest?.text)
        }
        if found.count > 1, !all { throw .ambiguous(lines: found.map { lineNumber(at: $0.lowerBound, in: text) }) }
        var result: [UInt8] = []
        result.reserveCapacity(text.count + found.count * (new.count - old.count))
        var at = 0
        for range in found {
            result += text[at..<range.lowerBound]
            result += new
            at = range.upperBound
        }
        result += text[at...]
        return ExactReplacement(ranges: found, result: result)
    }

    /// The non-overlapping occurrences of `needle`, from the start.
    static func occurrences(of needle: [UInt8], in text: [UInt8]) -> [Range<Int>] {
        guard needle.count <= text.count, let first = needle.first else { return [] }
        var found: [Range<Int>] = []
        var start = 0
        let last = text.count - needle.count
        while start <= last {
            guard let candidate = text[start...last].firstIndex(of: first) else { break }
            if text[candidate..<(candidate + needle.count)].elementsEqual(needle) {
                found.append(candidate..<(candidate + needle.count))
                start = candidate + needle.count
            } else {
                start = candidate + 1
            }
        }
        return found
    }

    /// The 1-based line of byte `offset`.
    public static func lineNumber(at offset: Int, in text: [UInt8]) -> Int {
        text[..<offset].reduce(1) { $1 == UInt8(ascii: "\n") ? $0 + 1 : $0 }
    }

    /// The line most like the first non-blank line of `old` (by shared character pairs, spaces
    /// ignored, the fewest edits apart among the closest), when one is at least half alike.
    static func nearestLine(to old: [UInt8], in text: [UInt8]) -> (line: Int, text: String)? {
        let wanted = old.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
            .map { $0.filter { $0 != UInt8(ascii: " ") && $0 != UInt8(ascii: "\t") && $0 != UInt8(ascii: "\r") } }
            .first { !$0.isEmpty }
        guard let wanted else { return nil }
        let wantedPairs = pairs(of: Array(wanted))
        var scored: [(line: Int, score: Double, squeezed: [UInt8], text: ArraySlice<UInt8>)] = []
        for (index, line) in text.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).enumerated() {
            let squeezed = line.filter { $0 != UInt8(ascii: " ") && $0 != UInt8(ascii: "\t") && $0 != UInt8(ascii: "\r") }
            guard !squeezed.isEmpty else { continue }
            let score = similarity(wantedPairs, pairs(of: squeezed), wanted.count, squeezed.count)
            if score >= 0.5 { scored.append((index + 1, score, squeezed, line)) }
        }
        guard let top = scored.map(\.score).max() else { return nil }
        // Pairs alone tie often ("lin 7" is as like "line 1" as "line 7"): edits decide.
        let close = scored.filter { $0.score >= top - 0.1 }.sorted { $0.score > $1.score }.prefix(50)
        let best = close.min { editDistance(Array(wanted), $0.squeezed) < editDistance(Array(wanted), $1.squeezed) }
        return best.map { ($0.line, String(decoding: $0.text, as: UTF8.self)) }
    }

    /// Levenshtein distance, on at most 200 bytes of each.
    private static func editDistance(_ a: [UInt8], _ b: [UInt8]) -> Int {
        let a = a.prefix(200), b = Array(b.prefix(200))
        var previous = Array(0...b.count)
        var row = previous
        for (i, x) in a.enumerated() {
            row[0] = i + 1
            for (j, y) in b.enumerated() { row[j + 1] = min(previous[j + 1] + 1, row[j] + 1, previous[j] + (x == y ? 0 : 1)) }
            swap(&previous, &row)
        }
        return previous[b.count]
    }

    private static func pairs(of bytes: [UInt8]) -> [UInt16: Int] {
        var counts: [UInt16: Int] = [:]
        guard bytes.count > 1 else { return bytes.first.map { [UInt16($0): 1] } ?? [:] }
        for index in 1..<bytes.count { counts[UInt16(bytes[index - 1]) << 8 | UInt16(bytes[index]), default: 0] += 1 }
        return counts
    }

    private static func similarity(_ a: [UInt16: Int], _ b: [UInt16: Int], _ aLength: Int, _ bLength: Int) -> Double {
        let shared = a.reduce(0) { $0 + min($1.value, b[$1.key] ?? 0) }
        let total = a.values.reduce(0, +) + b.values.reduce(0, +)
        return total == 0 ? (aLength == bLength ? 1 : 0) : 2 * Double(shared) / Double(total)
    }
}
