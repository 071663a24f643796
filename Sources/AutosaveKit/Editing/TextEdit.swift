/// How a client counts the characters of a line: LSP's `positionEncoding`.
///
/// `utf-16` is LSP's default (what most editors' language clients send); `utf-8` counts bytes,
/// as Neovim does; `utf-32` counts Unicode scalars.
public enum PositionEncoding: String, Sendable, CaseIterable {
    case utf8 = "utf-8"
    case utf16 = "utf-16"
    case utf32 = "utf-32"
}

/// A place in a text: a zero-based line and a zero-based character in that line, as LSP counts
/// them (lines end at `\n`, `\r\n` or `\r`; characters in the request's `PositionEncoding`).
public struct TextPosition: Sendable, Hashable, Comparable, CustomStringConvertible {
    public var line: Int
    public var character: Int

    public init(line: Int, character: Int) {
        self.line = line
        self.character = character
    }

    public static func < (lhs: TextPosition, rhs: TextPosition) -> Bool {
        (lhs.line, lhs.character) < (rhs.line, rhs.character)
    }

    /// `line:character`, zero-based as sent.
    public var description: String { "\(line):\(character)" }
}

/// The text between two positions (`start` included, `end` not).
public struct TextRange: Sendable, Hashable, CustomStringConvertible {
    public var start: TextPosition
    public var end: TextPosition

    public init(start: TextPosition, end: TextPosition) {
        self.start = start
        self.end = end
    }

    public var description: String { "\(start)-\(end)" }
}

/// One change of a ranged edit: the text in `range` becomes `text`.
///
/// Every edit of a request is placed in the text as it was before the request (LSP's rule), so
/// a client never has to shift later edits by what earlier ones inserted.
public struct TextEdit: Sendable, Equatable {
    public var range: TextRange
    /// The new text, as UTF-8 bytes.
    public var text: [UInt8]

    public init(range: TextRange, text: [UInt8]) {
        self.range = range
        self.text = text
    }
}

/// Why a ranged edit was refused. Nothing of the request is applied. `edit` is the zero-based
/// index of the offending edit in the request's list.
public enum TextEditError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The range ends before it starts.
    case backwards(edit: Int, TextRange)
    /// A position names a line the text does not have.
    case noSuchLine(edit: Int, TextPosition, lineCount: Int)
    /// A position is past the end of its line (the line break is not part of the line).
    case pastEndOfLine(edit: Int, TextPosition, lineLength: Int, PositionEncoding)
    /// A position falls inside one character: between the bytes of a UTF-8 sequence, or between
    /// the two halves of a UTF-16 surrogate pair.
    case insideCharacter(edit: Int, TextPosition, PositionEncoding)
    /// Two edits change the same text.
    case overlapping(first: Int, TextRange, second: Int, TextRange)
    /// There is no text to edit: the file does not exist.
    case noText

    /// The indices of the edits at fault, in the request's list.
    public var edits: [Int] {
        switch self {
        case .backwards(let edit, _), .noSuchLine(let edit, _, _), .pastEndOfLine(let edit, _, _, _), .insideCharacter(let edit, _, _):
            [edit]
        case .overlapping(let first, _, let second, _): [first, second]
        case .noText: []
        }
    }

    public var description: String {
        switch self {
        case .backwards(let edit, let range):
            "edit \(edit): the range \(range) ends before it starts"
        case .noSuchLine(let edit, let position, let lineCount):
            "edit \(edit): line \(position.line) does not exist (the text has \(lineCount) lines, 0 to \(lineCount - 1))"
        case .pastEndOfLine(let edit, let position, let length, let encoding):
            "edit \(edit): character \(position.character) is past the end of line \(position.line), "
                + "which is \(length) \(encoding.unitName) long"
        case .insideCharacter(let edit, let position, let encoding):
            "edit \(edit): \(position) falls inside a character (counting \(encoding.unitName))"
        case .overlapping(let first, let firstRange, let second, let secondRange):
            "edits \(first) (\(firstRange)) and \(second) (\(secondRange)) overlap; edits of one request must not"
        case .noText:
            "the file does not exist: there is no text to edit; write it first"
        }
    }
}

extension PositionEncoding {
    /// What one unit is called, for messages.
    var unitName: String {
        switch self {
        case .utf8: "bytes"
        case .utf16: "UTF-16 code units"
        case .utf32: "characters"
        }
    }
}
