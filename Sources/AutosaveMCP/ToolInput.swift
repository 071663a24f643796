import AutosaveKit
import MCP

/// A tool's failure, as the model reads it: what was wrong, and what to do.
struct ToolFailure: Error {
    var message: String
    init(_ message: String) { self.message = message }
}

extension Error {
    /// The message a model reads for this failure.
    var message: String { (self as? ToolFailure)?.message ?? "\(self)" }
}

/// A tool call's arguments, read with errors that name the argument.
struct ToolInput {
    let arguments: [String: Value]

    init(_ arguments: [String: Value]) { self.arguments = arguments }

    func string(_ key: String) throws(ToolFailure) -> String {
        guard let value = arguments[key], !value.isNull else { throw ToolFailure("`\(key)` is missing (a string)") }
        guard let text = value.stringValue else { throw ToolFailure("`\(key)` must be a string, got \(value)") }
        return text
    }

    func integer(_ key: String) throws(ToolFailure) -> Int? {
        guard let value = arguments[key], !value.isNull else { return nil }
        if let number = value.intValue { return number }
        if let number = value.doubleValue, number.rounded() == number, abs(number) < 1e15 { return Int(number) }
        throw ToolFailure("`\(key)` must be a whole number, got \(value)")
    }

    func boolean(_ key: String) throws(ToolFailure) -> Bool? {
        guard let value = arguments[key], !value.isNull else { return nil }
        guard let flag = value.boolValue else { throw ToolFailure("`\(key)` must be true or false, got \(value)") }
        return flag
    }

    func strings(_ key: String) throws(ToolFailure) -> [String]? {
        guard let value = arguments[key], !value.isNull else { return nil }
        guard let items = value.arrayValue else { throw ToolFailure("`\(key)` must be an array of strings, got \(value)") }
        return try items.map { item throws(ToolFailure) in
            guard let text = item.stringValue else { throw ToolFailure("`\(key)` must hold strings only, got \(item)") }
            return text
        }
    }
}

/// A member of a JSON object built here (no source position).
func field(_ key: String, _ value: JSONValue) -> JSONMember {
    JSONMember(key: key, value: value, position: SourcePosition(line: 0, column: 0))
}
