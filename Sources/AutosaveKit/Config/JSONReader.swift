import Glibc

/// Parses JSON text strictly (RFC 8259), reporting the line and column of the first error.
///
/// Written for the configuration file: Foundation's parser reports only a byte offset and
/// forgets key order.
public struct JSONReader {
    /// Why a text is not valid JSON, and where.
    public struct SyntaxError: Error, Equatable, Sendable {
        public var message: String
        public var position: SourcePosition

        public init(message: String, position: SourcePosition) {
            self.message = message
            self.position = position
        }
    }

    /// The text, borrowed for the parse: a request's line is read where the socket put it.
    let bytes: UnsafeRawBufferPointer
    var index = 0
    private var line = 1
    private var lineStart = 0
    private var depth = 0
    private static let maximumDepth = 128

    init(_ bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

    /// - Throws: `SyntaxError` naming what was expected and where.
    public static func parse(_ bytes: [UInt8]) throws(SyntaxError) -> JSONValue {
        // Array's withUnsafeBytes rethrows untyped errors: the typed one goes through a Result.
        try bytes.withUnsafeBytes { raw in Result { () throws(SyntaxError) in try parse(raw) } }.get()
    }

    /// `parse` of bytes the caller holds (a socket's buffer): nothing of them is kept.
    ///
    /// - Throws: `SyntaxError` naming what was expected and where.
    public static func parse(_ bytes: UnsafeRawBufferPointer) throws(SyntaxError) -> JSONValue {
        var reader = JSONReader(bytes)
        reader.skipWhitespace()
        let value = try reader.parseValue()
        reader.skipWhitespace()
        guard reader.index == bytes.count else { throw reader.error("unexpected \(reader.describeCurrent()) after the end of the document") }
        return value
    }

    /// Where the reader stands in the text.
    public var position: SourcePosition { SourcePosition(line: line, column: index - lineStart + 1) }

    func error(_ message: String) -> SyntaxError { SyntaxError(message: message, position: position) }

    func describeCurrent() -> String {
        guard index < bytes.count else { return "end of file" }
        let byte = bytes[index]
        if byte >= 0x21 && byte < 0x7F { return "`\(Character(Unicode.Scalar(byte)))`" }
        return "byte 0x" + String(byte, radix: 16)
    }

    mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0D: index += 1
            case 0x0A:
                index += 1
                line += 1
                lineStart = index
            default: return
            }
        }
    }

    mutating func parseValue() throws(SyntaxError) -> JSONValue {
        guard index < bytes.count else { throw error("expected a value, found end of file") }
        switch bytes[index] {
        case UInt8(ascii: "{"): return try parseObject()
        case UInt8(ascii: "["): return try parseArray()
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"): return try parseLiteral("true", .bool(true))
        case UInt8(ascii: "f"): return try parseLiteral("false", .bool(false))
        case UInt8(ascii: "n"): return try parseLiteral("null", .null)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try parseNumber()
        default: throw error("expected a value, found \(describeCurrent())")
        }
    }

    private mutating func parseLiteral(_ word: StaticString, _ value: JSONValue) throws(SyntaxError) -> JSONValue {
        let count = word.utf8CodeUnitCount
        guard bytes.count - index >= count, memcmp(bytes.baseAddress! + index, word.utf8Start, count) == 0 else {
            throw error("expected a value, found \(describeCurrent())")
        }
        index += count
        return value
    }

    private mutating func enter() throws(SyntaxError) {
        depth += 1
        guard depth <= Self.maximumDepth else { throw error("nesting deeper than \(Self.maximumDepth) levels") }
    }

    private mutating func parseObject() throws(SyntaxError) -> JSONValue {
        var members: [JSONMember] = []
        // Duplicates are looked for by a scan of `members` while the object is small, then in a
        // set: a scan alone makes an object of n keys cost n² (a 200 KB control-socket request
        // took 30 s), and a set for every small object was a tenth of reading a `history` answer.
        var keys: Set<String>? = nil
        try readObject { reader, key, keyPosition throws(SyntaxError) in
            if Self.isDuplicate(key, in: members, seen: &keys) {
                throw SyntaxError(message: "duplicate key `\(key)`", position: keyPosition)
            }
            members.append(JSONMember(key: key, value: try reader.parseValue(), position: keyPosition))
        }
        return .object(members)
    }

    /// Objects up to this many members are checked for duplicate keys by a scan.
    private static let scannedMembers = 16

    /// Whether `key` is among the keys of `members`; `seen` holds them once there are many.
    private static func isDuplicate(_ key: String, in members: [JSONMember], seen: inout Set<String>?) -> Bool {
        if seen == nil {
            guard members.count >= scannedMembers else { return members.contains { $0.key == key } }
            seen = Set(members.map(\.key))
        }
        return !seen!.insert(key).inserted
    }

    private mutating func parseArray() throws(SyntaxError) -> JSONValue {
        var items: [JSONValue] = []
        try readArray { reader throws(SyntaxError) in items.append(try reader.parseValue()) }
        return .array(items)
    }

    /// Reads an object, member by member: `each` gets its key, where the key stands, and the
    /// reader at its value, which `each` must read. Duplicate keys are left to `each`.
    ///
    /// - Throws: `SyntaxError` when the next value is no object, or is malformed.
    public mutating func readObject(
        _ each: (inout JSONReader, _ key: String, _ position: SourcePosition) throws(SyntaxError) -> Void
    ) throws(SyntaxError) {
        try readSequence(open: UInt8(ascii: "{"), close: UInt8(ascii: "}"), kind: "an object") { reader throws(SyntaxError) in
            guard reader.index < reader.bytes.count, reader.bytes[reader.index] == UInt8(ascii: "\"") else {
                throw reader.error("expected a key in double quotes, found \(reader.describeCurrent())")
            }
            let keyPosition = reader.position
            let key = try reader.parseString()
            reader.skipWhitespace()
            guard reader.index < reader.bytes.count, reader.bytes[reader.index] == UInt8(ascii: ":") else {
                throw reader.error("expected `:` after key `\(key)`, found \(reader.describeCurrent())")
            }
            reader.index += 1
            reader.skipWhitespace()
            try each(&reader, key, keyPosition)
        }
    }

    /// Reads an array, item by item: `each` gets the reader at an item, which it must read.
    ///
    /// - Throws: `SyntaxError` when the next value is no array, or is malformed.
    public mutating func readArray(_ each: (inout JSONReader) throws(SyntaxError) -> Void) throws(SyntaxError) {
        try readSequence(open: UInt8(ascii: "["), close: UInt8(ascii: "]"), kind: "an array", each)
    }

    /// An object's or array's punctuation around its elements, each read by `each`.
    private mutating func readSequence(
        open: UInt8, close: UInt8, kind: String, _ each: (inout JSONReader) throws(SyntaxError) -> Void
    ) throws(SyntaxError) {
        guard index < bytes.count, bytes[index] == open else { throw error("expected \(kind), found \(describeCurrent())") }
        try enter()
        defer { depth -= 1 }
        index += 1
        skipWhitespace()
        if index < bytes.count && bytes[index] == close {
            index += 1
            return
        }
        func closing() -> String { "`\(Character(Unicode.Scalar(close)))`" }
        while true {
            skipWhitespace()
            try each(&self)
            skipWhitespace()
            guard index < bytes.count else { throw error("expected `,` or \(closing()), found end of file") }
            if bytes[index] == UInt8(ascii: ",") {
                index += 1
                skipWhitespace()
                if index < bytes.count && bytes[index] == close { throw error("trailing comma before \(closing())") }
                continue
            }
            guard bytes[index] == close else { throw error("expected `,` or \(closing()), found \(describeCurrent())") }
            index += 1
            return
        }
    }

    /// Reads a string; with `keeping` false it is checked as strictly but no String is made
    /// (and "" returned): a value passed over costs no allocation.
    mutating func parseString(keeping: Bool = true) throws(SyntaxError) -> String {
        index += 1
        // Bytes are gathered as they are (runs without escapes copied whole) and made a String
        // once at the end: 50 MB of text is one validation, not one append per line.
        var result: [UInt8] = []
        let start = index
        var runStart = index
        var isASCII = true
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                let run = UnsafeRawBufferPointer(rebasing: bytes[runStart..<index])
                index += 1
                guard keeping else {
                    // Escapes are ASCII in the text: it is valid UTF-8 exactly when what it says is.
                    let source = UnsafeRawBufferPointer(rebasing: bytes[start..<(index - 1)])
                    guard isASCII || String(validating: source, as: UTF8.self) != nil else {
                        throw SyntaxError(message: "invalid UTF-8 in a string", position: position)
                    }
                    return ""
                }
                // Without escapes the String is made straight from the text: no array between.
                let text: String?
                if result.isEmpty {
                    text = isASCII ? String(decoding: run, as: UTF8.self) : String(validating: run, as: UTF8.self)
                } else {
                    result.append(contentsOf: run)
                    text = isASCII ? String(decoding: result, as: UTF8.self) : String(validating: result, as: UTF8.self)
                }
                // Escapes only add whole, valid sequences: what fails here is the source's own.
                guard let text else { throw SyntaxError(message: "invalid UTF-8 in a string", position: position) }
                return text
            }
            if byte < 0x20 { throw error(byte == 0x0A ? "unterminated string (a newline inside quotes)" : "control character in a string") }
            if byte == UInt8(ascii: "\\") {
                if keeping, result.isEmpty { result.reserveCapacity(Swift.min(bytes.count - runStart, 1 << 30)) }
                if keeping { result.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[runStart..<index])) }
                index += 1
                let scalar = try parseEscape()
                guard keeping else {
                    runStart = index
                    continue
                }
                if scalar.isASCII {
                    result.append(UInt8(scalar.value))
                } else {
                    UTF8.encode(scalar) { result.append($0) }
                }
                runStart = index
                continue
            }
            if byte >= 0x80 { isASCII = false }
            index += 1
        }
        throw error("unterminated string, found end of file")
    }

    private mutating func parseEscape() throws(SyntaxError) -> Unicode.Scalar {
        guard index < bytes.count else { throw error("unterminated escape, found end of file") }
        let byte = bytes[index]
        index += 1
        switch byte {
        case UInt8(ascii: "\""): return "\""
        case UInt8(ascii: "\\"): return "\\"
        case UInt8(ascii: "/"): return "/"
        case UInt8(ascii: "b"): return "\u{08}"
        case UInt8(ascii: "f"): return "\u{0C}"
        case UInt8(ascii: "n"): return "\n"
        case UInt8(ascii: "r"): return "\r"
        case UInt8(ascii: "t"): return "\t"
        case UInt8(ascii: "u"):
            let high = try parseHex4()
            if (0xD800..<0xDC00).contains(high) {
                guard bytes.count - index >= 6, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u") else {
                    throw error("unpaired surrogate in \\u escape")
                }
                index += 2
                let low = try parseHex4()
                guard (0xDC00..<0xE000).contains(low) else { throw error("unpaired surrogate in \\u escape") }
                return Unicode.Scalar(0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00))!
            }
            guard let scalar = Unicode.Scalar(high) else { throw error("unpaired surrogate in \\u escape") }
            return scalar
        default:
            index -= 1
            throw error("invalid escape `\\\(Character(Unicode.Scalar(byte)))`")
        }
    }

    private mutating func parseHex4() throws(SyntaxError) -> UInt32 {
        guard bytes.count - index >= 4 else { throw error("expected 4 hex digits after \\u") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            guard let digit = Character(Unicode.Scalar(bytes[index])).hexDigitValue else {
                throw error("expected 4 hex digits after \\u, found \(describeCurrent())")
            }
            value = value * 16 + UInt32(digit)
            index += 1
        }
        return value
    }

    private mutating func parseNumber() throws(SyntaxError) -> JSONValue {
        let range = try scanNumber()
        return .number(String(decoding: UnsafeRawBufferPointer(rebasing: bytes[range]), as: UTF8.self))
    }

    /// Reads past a number, checking its grammar; returns where its text is.
    mutating func scanNumber() throws(SyntaxError) -> Range<Int> {
        let start = index
        func digits() -> Int {
            let begin = index
            while index < bytes.count && bytes[index] >= UInt8(ascii: "0") && bytes[index] <= UInt8(ascii: "9") { index += 1 }
            return index - begin
        }
        if bytes[index] == UInt8(ascii: "-") { index += 1 }
        let integerStart = index
        guard digits() > 0 else { throw error("expected a digit, found \(describeCurrent())") }
        if bytes[integerStart] == UInt8(ascii: "0") && index - integerStart > 1 {
            throw SyntaxError(message: "numbers cannot have leading zeros", position: position)
        }
        if index < bytes.count && bytes[index] == UInt8(ascii: ".") {
            index += 1
            guard digits() > 0 else { throw error("expected a digit after `.`, found \(describeCurrent())") }
        }
        if index < bytes.count && (bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E")) {
            index += 1
            if index < bytes.count && (bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-")) { index += 1 }
            guard digits() > 0 else { throw error("expected a digit in the exponent, found \(describeCurrent())") }
        }
        return start..<index
    }
}
