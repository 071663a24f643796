import AutosaveKit

/// A tool's failure, as the model reads it: what was wrong, and what to do.
struct ToolFailure: Error {
    var message: String
    init(_ message: String) { self.message = message }
}

/// A tool call's arguments, read with errors that name the argument.
struct ToolInput {
    let arguments: JSONValue

    init(_ arguments: JSONValue?) { self.arguments = arguments ?? .object([]) }

    private func value(_ key: String) -> JSONValue? {
        guard let value = arguments[key], value != .null else { return nil }
        return value
    }

    func string(_ key: String) throws -> String {
        guard let value = value(key) else { throw ToolFailure("`\(key)` is missing (a string)") }
        guard let text = value.stringValue else { throw ToolFailure("`\(key)` must be a string, got \(value.jsonText)") }
        return text
    }

    func optionalString(_ key: String) throws -> String? {
        guard value(key) != nil else { return nil }
        return try string(key)
    }

    func integer(_ key: String) throws -> Int? {
        guard let value = value(key) else { return nil }
        if case .number(let text) = value {
            if let number = Int(text) { return number }
            if let number = Double(text), number.rounded() == number, abs(number) < 1e15 { return Int(number) }
        }
        throw ToolFailure("`\(key)` must be a whole number, got \(value.jsonText)")
    }

    func boolean(_ key: String) throws -> Bool? {
        guard let value = value(key) else { return nil }
        guard case .bool(let flag) = value else { throw ToolFailure("`\(key)` must be true or false, got \(value.jsonText)") }
        return flag
    }

    func strings(_ key: String) throws -> [String]? {
        guard let value = value(key) else { return nil }
        guard let items = value.arrayValue else { throw ToolFailure("`\(key)` must be an array of strings, got \(value.jsonText)") }
        return try items.map { item in
            guard let text = item.stringValue else { throw ToolFailure("`\(key)` must hold strings only, got \(item.jsonText)") }
            return text
        }
    }
}

/// A member of a JSON object built here (no source position).
func field(_ key: String, _ value: JSONValue) -> JSONMember {
    JSONMember(key: key, value: value, position: SourcePosition(line: 0, column: 0))
}
