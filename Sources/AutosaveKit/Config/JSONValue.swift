/// A parsed JSON document that remembers key order and where each value started.
///
/// The configuration needs both: errors point at a line and column, and unknown keys are
/// reported in the order the user wrote them.
public indirect enum JSONValue: Sendable, Equatable {
    case null
    case bool(Bool)
    /// The number's text as written, so `1000` and `1000.0` stay distinguishable.
    case number(String)
    case string(String)
    case array([JSONValue])
    case object([JSONMember])

    /// A short name of the value's type for error messages ("a string", "an object").
    public var kindDescription: String {
        switch self {
        case .null: "null"
        case .bool: "a boolean"
        case .number: "a number"
        case .string: "a string"
        case .array: "an array"
        case .object: "an object"
        }
    }

    /// The value as it would be written back, compactly.
    public var jsonText: String {
        var text = ""
        write(into: &text)
        return text
    }

    /// Appends the JSON text to `text`: one growing string, not a string per member.
    public func write(into text: inout String) {
        switch self {
        case .null: text += "null"
        case .bool(let value): text += value ? "true" : "false"
        case .number(let number): text += number
        case .string(let string): JSONValue.appendQuoted(string, to: &text)
        case .array(let items):
            text += "["
            for (index, item) in items.enumerated() {
                if index > 0 { text += "," }
                item.write(into: &text)
            }
            text += "]"
        case .object(let members):
            text += "{"
            for (index, member) in members.enumerated() {
                if index > 0 { text += "," }
                JSONValue.appendQuoted(member.key, to: &text)
                text += ":"
                member.value.write(into: &text)
            }
            text += "}"
        }
    }

    /// `text` as a JSON string literal.
    public static func quoted(_ text: String) -> String {
        var result = ""
        appendQuoted(text, to: &result)
        return result
    }

    /// Appends `string` as a JSON string literal; a string with nothing to escape is appended whole.
    static func appendQuoted(_ string: String, to text: inout String) {
        let utf8 = string.utf8
        func needsEscape(_ byte: UInt8) -> Bool { byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") }
        guard utf8.contains(where: needsEscape) else {
            text += "\""
            text += string
            text += "\""
            return
        }
        // Bytes, runs between escapes copied whole, made a String once (the escapes are ASCII, so
        // the bytes stay valid UTF-8): 50 MB of text lines is not 50 million appends.
        var quoted: [UInt8] = [UInt8(ascii: "\"")]
        quoted.reserveCapacity(utf8.count + utf8.count / 8 + 2)
        var contiguous = string
        contiguous.withUTF8 { bytes in
            var runStart = 0
            for index in bytes.indices where needsEscape(bytes[index]) {
                quoted.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<index]))
                let byte = bytes[index]
                let short: UInt8? =
                    switch byte {
                    case UInt8(ascii: "\""), UInt8(ascii: "\\"): byte
                    case 0x0A: UInt8(ascii: "n")
                    case 0x0D: UInt8(ascii: "r")
                    case 0x09: UInt8(ascii: "t")
                    default: nil
                    }
                quoted.append(UInt8(ascii: "\\"))
                if let short {
                    quoted.append(short)
                } else {
                    let hex = String(byte, radix: 16)
                    quoted += Array(("u" + String(repeating: "0", count: 4 - hex.count) + hex).utf8)
                }
                runStart = index + 1
            }
            quoted.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart...]))
        }
        quoted.append(UInt8(ascii: "\""))
        text += String(decoding: quoted, as: UTF8.self)
    }
}

/// One `"key": value` pair of an object, with the key's position in the source.
public struct JSONMember: Sendable, Equatable {
    public var key: String
    public var value: JSONValue
    public var position: SourcePosition

    public init(key: String, value: JSONValue, position: SourcePosition) {
        self.key = key
        self.value = value
        self.position = position
    }
}

/// A 1-based line and column in a source text.
public struct SourcePosition: Sendable, Equatable, CustomStringConvertible {
    public var line: Int
    public var column: Int

    public init(line: Int, column: Int) {
        self.line = line
        self.column = column
    }

    public var description: String { "line \(line), column \(column)" }
}
