/// Applies a request's ranged edits to a text: all of them, or none.
///
/// Positions are resolved against the text before the request; edits may come in any order but
/// must not overlap (touching is fine, and several inserts at one place keep their order). The
/// cost is O(log n) to find each edited line, a walk along it to the position, and O(log n + the
/// edit's size) to apply it: an edit into a 10 MB buffer costs what it changes.
public enum RangedEdit {
    /// The text with `edits` applied.
    ///
    /// - Throws: `TextEditError` naming the first edit that cannot be placed; nothing is applied.
    public static func apply(_ edits: [TextEdit], to text: [UInt8], encoding: PositionEncoding) throws(TextEditError) -> [UInt8] {
        let rope = TextRope(text)
        return rope.applying(try place(edits, in: rope, encoding: encoding)).bytes
    }

    /// The edits as byte splices of `text`, in text order: what the journal records of them.
    ///
    /// - Throws: `TextEditError` naming the first edit that cannot be placed.
    public static func place(_ edits: [TextEdit], in text: TextRope, encoding: PositionEncoding) throws(TextEditError) -> [ByteSplice] {
        var placed: [(index: Int, start: Int, end: Int)] = []
        placed.reserveCapacity(edits.count)
        for (index, edit) in edits.enumerated() {
            guard edit.range.start <= edit.range.end else { throw .backwards(edit: index, edit.range) }
            let start = try CharacterUnits.offset(of: edit.range.start, in: text, encoding: encoding, edit: index)
            let end = try CharacterUnits.offset(of: edit.range.end, in: text, encoding: encoding, edit: index)
            placed.append((index, start, end))
        }
        // In text order; at one start, inserts before the edit that replaces from there (they
        // touch, they do not overlap), and otherwise the request's order (inserts at one place).
        placed.sort { ($0.start, $0.start == $0.end ? 0 : 1, $0.index) < ($1.start, $1.start == $1.end ? 0 : 1, $1.index) }
        for (earlier, later) in zip(placed, placed.dropFirst()) where earlier.end > later.start {
            let (first, second) = earlier.index < later.index ? (earlier, later) : (later, earlier)
            throw .overlapping(first: first.index, edits[first.index].range, second: second.index, edits[second.index].range)
        }
        return placed.map { ByteSplice(start: $0.start, end: $0.end, text: edits[$0.index].text) }
    }
}

/// Bytes `start..<end` of a text replaced by `text`: a ranged edit once its positions are found.
public struct ByteSplice: Sendable, Equatable {
    public var start: Int
    public var end: Int
    public var text: [UInt8]

    public init(start: Int, end: Int, text: [UInt8]) {
        self.start = start
        self.end = end
        self.text = text
    }

    /// `text` with `splices` (in text order, not overlapping, within it) applied, in one copy.
    public static func apply(_ splices: [ByteSplice], to text: [UInt8]) -> [UInt8] {
        var result: [UInt8] = []
        result.reserveCapacity(text.count + splices.reduce(0) { $0 + $1.text.count - ($1.end - $1.start) })
        var copied = 0
        for splice in splices {
            result += text[copied..<splice.start]
            result += splice.text
            copied = splice.end
        }
        result += text[copied...]
        return result
    }

    /// Whether `splices` are in text order, do not overlap, and lie within a text of `length` bytes:
    /// what a journal record read back from disk must be before it is applied.
    static func fit(_ splices: [ByteSplice], length: Int) -> Bool {
        var previousEnd = 0
        for splice in splices {
            guard splice.start >= previousEnd, splice.start <= splice.end, splice.end <= length else { return false }
            previousEnd = splice.end
        }
        return true
    }
}

/// How positions count characters along a line: bytes (UTF-8), UTF-16 code units or code points.
enum CharacterUnits {
    /// The byte offset of `position` in `text`: O(log n) to the line, then a walk along it.
    ///
    /// - Throws: `.noSuchLine`, `.pastEndOfLine` or `.insideCharacter` for edit number `edit`.
    static func offset(of position: TextPosition, in text: TextRope, encoding: PositionEncoding, edit: Int) throws(TextEditError) -> Int {
        guard position.line >= 0, position.line < text.lineCount else {
            throw .noSuchLine(edit: edit, position, lineCount: text.lineCount)
        }
        guard position.character >= 0 else {
            throw .pastEndOfLine(edit: edit, position, lineLength: units(ofLine: position.line, in: text, encoding), encoding)
        }
        // No character is longer than 4 bytes: this much of the line holds the position and
        // the whole character at it, however long the line.
        let window = position.character < (Int.max - 4) / 4 ? 4 * position.character + 4 : Int.max
        let (start, line) = text.lineBytes(position.line, limit: window)
        var offset = 0
        var counted = 0
        while counted < position.character {
            guard offset < line.count else {
                throw .pastEndOfLine(edit: edit, position, lineLength: units(ofLine: position.line, in: text, encoding), encoding)
            }
            let (length, units) = character(at: offset, in: line, end: line.count, encoding: encoding)
            guard counted + units <= position.character else { throw .insideCharacter(edit: edit, position, encoding) }
            offset += length
            counted += units
        }
        return start + offset
    }

    /// How long line `line` is in `encoding`'s units, for messages.
    static func units(ofLine line: Int, in text: TextRope, _ encoding: PositionEncoding) -> Int {
        let bytes = text.lineBytes(line).bytes
        var offset = 0
        var counted = 0
        while offset < bytes.count {
            let (length, units) = character(at: offset, in: bytes, end: bytes.count, encoding: encoding)
            offset += length
            counted += units
        }
        return counted
    }

    /// The bytes of the character at `offset` and the units it counts for. A byte that does not
    /// start a valid UTF-8 sequence is one character of one unit, as its replacement U+FFFD is.
    static func character(at offset: Int, in text: [UInt8], end: Int, encoding: PositionEncoding) -> (bytes: Int, units: Int) {
        let length = sequenceLength(at: offset, in: text, end: end)
        switch encoding {
        case .utf8: return (length, length)
        case .utf16: return (length, length == 4 ? 2 : 1)
        case .utf32: return (length, 1)
        }
    }

    /// The length of the well-formed UTF-8 sequence at `offset`, or 1 when there is none.
    static func sequenceLength(at offset: Int, in text: [UInt8], end: Int) -> Int {
        let lead = text[offset]
        func isContinuation(_ index: Int, _ range: ClosedRange<UInt8> = 0x80...0xBF) -> Bool {
            index < end && range.contains(text[index])
        }
        switch lead {
        case 0x00...0x7F: return 1
        case 0xC2...0xDF: return isContinuation(offset + 1) ? 2 : 1
        case 0xE0...0xEF:
            // No overlong forms (E0 80–9F) and no surrogates (ED A0–BF).
            let second: ClosedRange<UInt8> = lead == 0xE0 ? 0xA0...0xBF : lead == 0xED ? 0x80...0x9F : 0x80...0xBF
            return isContinuation(offset + 1, second) && isContinuation(offset + 2) ? 3 : 1
        case 0xF0...0xF4:
            let second: ClosedRange<UInt8> = lead == 0xF0 ? 0x90...0xBF : lead == 0xF4 ? 0x80...0x8F : 0x80...0xBF
            return isContinuation(offset + 1, second) && isContinuation(offset + 2) && isContinuation(offset + 3) ? 4 : 1
        default: return 1
        }
    }
}
