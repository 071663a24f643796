import AutosaveKit
import FoundationEssentials

/// Typed access to a request's params (and to a result, on the client side): the JSON reader the
/// method table (`Methods/`) reads with, its errors naming the field.
struct RPCParams {
    let members: [JSONMember]
    /// The raw bytes after the request's line (announced by `contentBytes`).
    var raw: [UInt8]? = nil

    /// The params of a request.
    init(members: [JSONMember], raw: [UInt8]? = nil) {
        self.members = members
        self.raw = raw
    }

    /// The members of a result (or of an object in one), which must be an object.
    init(result: JSONValue) throws(RPCError) {
        guard case .object(let members) = result else { throw .invalidParams("expected an object, got \(result.kindDescription)") }
        self.init(members: members)
    }

    func value(_ key: String) -> JSONValue? { members.first { $0.key == key }?.value }

    /// Whether `key` is given at all (`null` included).
    func has(_ key: String) -> Bool { value(key) != nil }

    /// The value of `key`, which must be given (`kind` says what it should be, for the error).
    func value(_ key: String, describedAs kind: String) throws(RPCError) -> JSONValue {
        guard let value = value(key) else { throw .invalidParams("missing `\(key)` (\(kind))") }
        return value
    }

    func int(_ key: String) throws(RPCError) -> Int {
        guard let number = try optionalInt(key) else { throw .invalidParams("missing `\(key)` (a whole number)") }
        return number
    }

    func bool(_ key: String) throws(RPCError) -> Bool {
        guard let flag = try optionalBool(key) else { throw .invalidParams("missing `\(key)` (true or false)") }
        return flag
    }

    func optionalString(_ key: String) throws(RPCError) -> String? {
        guard let value = value(key), value != .null else { return nil }
        guard case .string(let text) = value else { throw .invalidParams("`\(key)` must be a string, got \(value.kindDescription)") }
        return text
    }

    func array(_ key: String) throws(RPCError) -> [JSONValue] {
        guard case .array(let items) = try value(key, describedAs: "an array") else { throw .invalidParams("`\(key)` must be an array") }
        return items
    }

    /// The array at `key`; nil when it is absent or null.
    func optionalArray(_ key: String) throws(RPCError) -> [JSONValue]? {
        guard let value = value(key), value != .null else { return nil }
        guard case .array(let items) = value else { throw .invalidParams("`\(key)` must be an array, got \(value.kindDescription)") }
        return items
    }

    func strings(_ key: String) throws(RPCError) -> [String] {
        guard let strings = try optionalStrings(key) else { throw .invalidParams("missing `\(key)` (an array of strings)") }
        return strings
    }

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

    /// The new content: `content` (UTF-8 text), `contentBase64` (any bytes), or `contentBytes`
    /// (that many raw bytes after the request's line), exactly one.
    func content() throws(RPCError) -> [UInt8] {
        let given = ["content", "contentBase64", "contentBytes"].filter { value($0) != nil }
        guard given.count == 1 else {
            if given.isEmpty {
                throw .invalidParams("missing `content` (UTF-8 text), `contentBase64` (bytes) or `contentBytes` (a count of raw bytes after the line)")
            }
            throw .invalidParams("give one of `content`, `contentBase64` and `contentBytes`, not \(given.map { "`\($0)`" }.joined(separator: " and "))")
        }
        switch (given[0], value(given[0])!) {
        case ("content", .string(let text)): return Array(text.utf8)
        case ("contentBase64", .string(let encoded)):
            guard let data = Data(base64Encoded: encoded) else { throw .invalidParams("`contentBase64` is not valid base64") }
            return Array(data)
        case ("contentBytes", _):
            // The framing read exactly the announced bytes; none attached means none came.
            guard let raw else { throw .invalidParams("`contentBytes` was given but no raw bytes followed the line") }
            return raw
        case (let key, let other): throw .invalidParams("`\(key)` must be a string, got \(other.kindDescription)")
        }
    }

    /// The unified diff of a `patch` request: `patch` (text) or `contentBytes` (raw bytes after the line).
    func patchText() throws(RPCError) -> [UInt8] {
        switch (value("patch"), value("contentBytes")) {
        case (.string(let text)?, nil): return Array(text.utf8)
        case (nil, .some):
            guard let raw else { throw .invalidParams("`contentBytes` was given but no raw bytes followed the line") }
            return raw
        case (nil, nil): throw .invalidParams("missing `patch` (a unified diff as text) or `contentBytes` (its raw bytes after the line)")
        case (.some, .some): throw .invalidParams("give `patch` or `contentBytes`, not both")
        case (let other?, nil): throw .invalidParams("`patch` must be a string, got \(other.kindDescription)")
        }
    }

    /// `positionEncoding`: `utf-8`, `utf-16` (the default, as in LSP) or `utf-32`.
    /// `client`: the name a client gives its edits in `edited` events (`client` when not given).
    func clientName() throws(RPCError) -> String {
        guard let value = value("client"), value != .null else { return "client" }
        guard case .string(let name) = value, !name.isEmpty, name.utf8.count <= 200 else {
            throw .invalidParams("`client` must be a name (a non-empty string of at most 200 bytes), got \(value.jsonText)")
        }
        return name
    }

    /// `keep` of `open`: which side keeps the path when edits overlap; `.some(nil)` (`null`) for the
    /// configuration's side again; nil when not given.
    func optionalConflictSide() throws(RPCError) -> ConflictSide?? {
        guard let value = value("keep") else { return nil }
        if value == .null { return .some(nil) }
        guard case .string(let name) = value, let side = ConflictSide(rawValue: name) else {
            throw .invalidParams("`keep` must be one of \(ConflictSide.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: ", ")) or null (the configuration's), got \(value.jsonText)")
        }
        return side
    }

    func positionEncoding() throws(RPCError) -> PositionEncoding {
        guard let value = value("positionEncoding"), value != .null else { return .utf16 }
        guard case .string(let name) = value, let encoding = PositionEncoding(rawValue: name) else {
            throw .invalidParams("`positionEncoding` must be one of \(PositionEncoding.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: ", ")), got \(value.jsonText)")
        }
        return encoding
    }

    /// `edits`: a non-empty array of `{start, end, text}` (or LSP's `{range: {start, end}, newText}`),
    /// positions as `{line, character}`.
    func textEdits() throws(RPCError) -> [TextEdit] {
        guard case .array(let items)? = value("edits") else {
            throw .invalidParams("`edits` must be an array of {\"start\": {\"line\", \"character\"}, \"end\": {…}, \"text\"}")
        }
        guard !items.isEmpty else { throw .invalidParams("`edits` is empty: there is nothing to apply") }
        var edits: [TextEdit] = []
        for (index, item) in items.enumerated() {
            let name = "edits[\(index)]"
            guard case .object(let fields) = item else { throw .invalidParams("`\(name)` must be an object") }
            let edit = RPCParams(members: fields)
            // LSP's TextEdit nests the positions in `range` and calls the text `newText`.
            let positions = try edit.optionalObject("range", in: name) ?? edit
            let start = try positions.position("start", in: name)
            let end = try positions.position("end", in: name)
            let textKey = edit.value("text") == nil && edit.value("newText") != nil ? "newText" : "text"
            guard case .string(let text)? = edit.value(textKey) else { throw .invalidParams("`\(name).text` must be a string") }
            edits.append(TextEdit(range: TextRange(start: start, end: end), text: Array(text.utf8)))
        }
        return edits
    }

    private func optionalObject(_ key: String, in name: String) throws(RPCError) -> RPCParams? {
        guard let value = value(key) else { return nil }
        guard case .object(let fields) = value else { throw .invalidParams("`\(name).\(key)` must be an object") }
        return RPCParams(members: fields)
    }

    private func position(_ key: String, in name: String) throws(RPCError) -> TextPosition {
        guard case .object(let fields)? = value(key) else {
            throw .invalidParams("`\(name).\(key)` must be an object {\"line\", \"character\"}")
        }
        let position = RPCParams(members: fields)
        func number(_ field: String) throws(RPCError) -> Int {
            guard case .number(let text)? = position.value(field), let number = Int(text), number >= 0 else {
                throw .invalidParams("`\(name).\(key).\(field)` must be a whole number from 0, got \(position.value(field)?.jsonText ?? "nothing")")
            }
            return number
        }
        return TextPosition(line: try number("line"), character: try number("character"))
    }
}
