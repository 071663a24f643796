/// A parsed JSON document that remembers key order and where each value started.
///
/// The configuration needs both: errors point at a line and column, and unknown keys are
/// reported in the order the user wrote them. Not `indirect`: the arrays already hold nested
/// values out of line, and boxing every scalar cost an allocation per number and string (a
/// hundred thousand for one `history` answer).
public enum JSONValue: Sendable, Equatable {
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
        var writer = JSONWriter()
        write(to: &writer)
        return writer.text
    }

    /// Appends the JSON text to `writer`: one growing byte array, not a string per member.
    public func write(to writer: inout JSONWriter) {
        switch self {
        case .null: writer.raw("null")
        case .bool(let value): writer.raw(value ? "true" : "false")
        case .number(let number): writer.raw(text: number)
        case .string(let string): writer.string(string)
        case .array(let items):
            writer.raw("[")
            for (index, item) in items.enumerated() {
                if index > 0 { writer.raw(",") }
                item.write(to: &writer)
            }
            writer.raw("]")
        case .object(let members):
            writer.raw("{")
            for (index, member) in members.enumerated() {
                if index > 0 { writer.raw(",") }
                writer.string(member.key)
                writer.raw(":")
                member.value.write(to: &writer)
            }
            writer.raw("}")
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
        guard string.utf8.contains(where: JSONWriter.needsEscape) else {
            text += "\""
            text += string
            text += "\""
            return
        }
        // Escaped as bytes and made a String once (the escapes are ASCII, so the bytes stay
        // valid UTF-8): 50 MB of text lines is not 50 million appends.
        var writer = JSONWriter(capacity: string.utf8.count + string.utf8.count / 8 + 2)
        writer.string(string)
        text += writer.text
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
