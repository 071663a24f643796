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
        text += "\""
        guard string.utf8.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) else {
            text += string
            text += "\""
            return
        }
        for scalar in string.unicodeScalars {
            switch scalar {
            case "\"": text += "\\\""
            case "\\": text += "\\\\"
            case "\n": text += "\\n"
            case "\r": text += "\\r"
            case "\t": text += "\\t"
            case let control where control.value < 0x20:
                text += "\\u" + String(repeating: "0", count: 4 - String(control.value, radix: 16).count)
                    + String(control.value, radix: 16)
            default: text.unicodeScalars.append(scalar)
            }
        }
        text += "\""
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
