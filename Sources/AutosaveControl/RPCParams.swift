import AutosaveKit
import Foundation

/// Typed access to a request's params, with errors that name the field.
struct RPCParams {
    let members: [JSONMember]

    func value(_ key: String) -> JSONValue? { members.first { $0.key == key }?.value }

    func string(_ key: String) throws(RPCError) -> String {
        guard let value = value(key) else { throw .invalidParams("missing `\(key)` (a string)") }
        guard case .string(let text) = value else { throw .invalidParams("`\(key)` must be a string, got \(value.kindDescription)") }
        return text
    }

    func optionalInt(_ key: String) throws(RPCError) -> Int? {
        guard let value = value(key), value != .null else { return nil }
        guard case .number(let text) = value, let number = Int(text) else {
            throw .invalidParams("`\(key)` must be a whole number, got \(value.jsonText)")
        }
        return number
    }

    func optionalUUID(_ key: String) throws(RPCError) -> UUID? {
        guard let value = value(key), value != .null else { return nil }
        guard case .string(let text) = value, let id = UUID(uuidString: text) else {
            throw .invalidParams("`\(key)` must be a UUID string, got \(value.jsonText)")
        }
        return id
    }

    func optionalBool(_ key: String) throws(RPCError) -> Bool? {
        guard let value = value(key), value != .null else { return nil }
        guard case .bool(let flag) = value else { throw .invalidParams("`\(key)` must be true or false, got \(value.jsonText)") }
        return flag
    }

    func optionalStrings(_ key: String) throws(RPCError) -> [String]? {
        guard let value = value(key), value != .null else { return nil }
        guard case .array(let items) = value else { throw .invalidParams("`\(key)` must be an array of strings") }
        var result: [String] = []
        for (index, item) in items.enumerated() {
            guard case .string(let text) = item else { throw .invalidParams("`\(key)[\(index)]` must be a string") }
            result.append(text)
        }
        return result
    }

    /// `content` (UTF-8 text) or `contentBase64` (any bytes), exactly one.
    func content() throws(RPCError) -> [UInt8] {
        switch (value("content"), value("contentBase64")) {
        case (.string(let text)?, nil): return Array(text.utf8)
        case (nil, .string(let encoded)?):
            guard let data = Data(base64Encoded: encoded) else { throw .invalidParams("`contentBase64` is not valid base64") }
            return Array(data)
        case (nil, nil): throw .invalidParams("missing `content` (UTF-8 text) or `contentBase64` (bytes)")
        case (.some, .some): throw .invalidParams("give `content` or `contentBase64`, not both")
        case (let text?, nil): throw .invalidParams("`content` must be a string, got \(text.kindDescription)")
        case (nil, let encoded?): throw .invalidParams("`contentBase64` must be a string, got \(encoded.kindDescription)")
        }
    }
}
