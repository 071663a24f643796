import AutosaveKit

/// `edit`: LSP's ranged edits, applied together as one revision; answered once durable.
public struct EditMethod: ControlMethod {
    public typealias Result = EditedFile
    public static var method: RPCMethod { .edit }

    public var path: String
    /// Each placed in the text as it was before the request.
    public var edits: [TextEdit]
    /// How characters are counted (`utf-16` when not given, as in LSP).
    public var positionEncoding: PositionEncoding?
    public var change: ChangeParams

    public init(path: String, edits: [TextEdit], positionEncoding: PositionEncoding? = nil, change: ChangeParams = ChangeParams()) {
        self.path = path
        self.edits = edits
        self.positionEncoding = positionEncoding
        self.change = change
    }

    public var params: [JSONMember] {
        var members = [member("path", .string(path))]
        if let positionEncoding { members.append(member("positionEncoding", .string(positionEncoding.rawValue))) }
        members.append(member("edits", .array(edits.map(Self.json))))
        return members + change.members
    }

    public init(params: [JSONMember], content: [UInt8]?) throws(RPCError) {
        let params = RPCParams(members: params, raw: content)
        let path = try params.string("path")
        let encoding = try params.positionEncoding()
        let client = try params.clientName()
        let edits = try params.textEdits()
        let changeID = try params.optionalUUID("changeId")
        self.init(
            path: path, edits: edits, positionEncoding: encoding,
            change: ChangeParams(changeID: changeID, ifRevision: try params.optionalInt("ifRevision"), client: client))
    }

    /// `{start: {line, character}, end: {line, character}, text}`.
    private static func json(_ edit: TextEdit) -> JSONValue {
        func position(_ position: TextPosition) -> JSONValue {
            .object([member("line", .number(String(position.line))), member("character", .number(String(position.character)))])
        }
        return .object([
            member("start", position(edit.range.start)), member("end", position(edit.range.end)),
            member("text", .string(String(decoding: edit.text, as: UTF8.self))),
        ])
    }
}
