/// Writes compact JSON text into one growing byte array.
///
/// Bytes, not a `String`: appending to a String checks capacity, ASCII-ness and breadcrumbs on
/// every call, and an answer of 10,000 versions is about a hundred thousand appends (writing it
/// as a String was 40% of the agent's time on `autosave history`). The caller writes the
/// punctuation between values; every `string` is escaped as RFC 8259 requires, so the text is
/// valid JSON (and valid UTF-8) whenever the calls make a valid sequence of tokens.
public struct JSONWriter: Sendable {
    /// The text written so far.
    private var output: TextBytes

    /// - Parameter capacity: bytes to reserve, when the size of the text is roughly known.
    public init(capacity: Int = 0) {
        output = TextBytes(capacity: capacity)
    }

    /// The text written so far, UTF-8, copied out.
    public var bytes: [UInt8] { output.bytes }

    /// The text written, UTF-8, handed over without a copy.
    public consuming func takeBytes() -> [UInt8] { output.takeBytes() }

    /// The text written so far.
    public var text: String { output.withUnsafeBytes { String(decoding: $0, as: UTF8.self) } }

    /// Appends `token` as it is: punctuation, a literal, a key already quoted (`"path":`).
    public mutating func raw(_ token: StaticString) {
        output.append(text: token)
    }

    /// Appends `text` as it is; it must be valid JSON where it goes (a number's text, say).
    /// Labelled, so that a literal goes to `raw(_:)` and is copied whole, not byte by byte.
    public mutating func raw(text: String) {
        output.append(utf8: text)
    }

    /// Appends JSON text written already (by another writer), as it is.
    public mutating func raw(bytes text: [UInt8]) {
        output.append(contentsOf: text)
    }

    /// Appends a moment (milliseconds since the epoch) as an RFC 3339 string in UTC with
    /// milliseconds: `"2026-11-27T10:00:00.123Z"`.
    public mutating func timestamp(_ milliseconds: Int64) {
        output.append(UInt8(ascii: "\""))
        output.appendTimestamp(milliseconds)
        output.append(UInt8(ascii: "\""))
    }

    /// Appends `value` in decimal.
    public mutating func number(_ value: Int64) {
        output.appendDecimal(value)
    }

    /// Appends `value` in decimal, of any integer type (the generic call costs more than
    /// `number(_: Int64)`, which a caller in another module reaches without it).
    public mutating func number(_ value: some BinaryInteger) {
        guard let small = Int64(exactly: value) else { return raw(text: String(value)) }
        number(small)
    }

    /// Appends `text` as a JSON string literal: `"`, `\`, and control characters escaped, the
    /// rest (other Unicode included) as it is. Runs between escapes are copied whole.
    public mutating func string(_ text: String) {
        var text = text
        text.withUTF8 { quote($0) }
    }

    /// `string` of UTF-8 bytes, which must be valid UTF-8.
    mutating func quote(_ utf8: UnsafeBufferPointer<UInt8>) {
        output.append(UInt8(ascii: "\""))
        var runStart = 0
        for index in utf8.indices where Self.needsEscape(utf8[index]) {
            output.append(UnsafeBufferPointer(rebasing: utf8[runStart..<index]))
            escape(utf8[index])
            runStart = index + 1
        }
        output.append(UnsafeBufferPointer(rebasing: utf8[runStart...]))
        output.append(UInt8(ascii: "\""))
    }

    /// Whether a byte cannot stand as it is inside a JSON string.
    static func needsEscape(_ byte: UInt8) -> Bool { byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") }

    private mutating func escape(_ byte: UInt8) {
        output.append(UInt8(ascii: "\\"))
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"): output.append(byte)
        case 0x0A: output.append(UInt8(ascii: "n"))
        case 0x0D: output.append(UInt8(ascii: "r"))
        case 0x09: output.append(UInt8(ascii: "t"))
        default:
            let hex: [UInt8] = Array("0123456789abcdef".utf8)
            output.append(contentsOf: [UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"), hex[Int(byte >> 4)], hex[Int(byte & 0xF)]])
        }
    }
}
