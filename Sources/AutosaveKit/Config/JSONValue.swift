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
        switch self {
        case .null: "null"
        case .bool(let value): value ? "true" : "false"
        case .number(let text): text
        case .string(let text): JSONValue.quoted(text)
        case .array(let items): "[" + items.map(\.jsonText).joined(separator: ",") + "]"
        case .object(let members):
            "{" + members.map { JSONValue.quoted($0.key) + ":" + $0.value.jsonText }.joined(separator: ",") + "}"
        }
    }

    /// `text` as a JSON string literal.
    public static func quoted(_ text: String) -> String {
        var result = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            case let control where control.value < 0x20:
                result += "\\u" + String(repeating: "0", count: 4 - String(control.value, radix: 16).count)
                    + String(control.value, radix: 16)
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result + "\""
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
