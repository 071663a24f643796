import AutosaveKit

/// `remove`: deletes the file after every edit queued before it; answered once the deletion is durable.
public struct RemoveMethod: ControlMethod {
    public typealias Result = EditedFile
    public static var method: RPCMethod { .remove }

    public var path: String
    public var change: ChangeParams

    public init(path: String, change: ChangeParams = ChangeParams()) {
        self.path = path
        self.change = change
    }

    public var params: [JSONMember] { [member("path", .string(path))] + change.members }

    public init(params: [JSONMember], content: [UInt8]?) throws(RPCError) {
        let params = RPCParams(members: params, raw: content)
        let path = try params.string("path")
        let client = try params.clientName()
        let changeID = try params.optionalUUID("changeId")
        self.init(path: path, change: ChangeParams(changeID: changeID, ifRevision: try params.optionalInt("ifRevision"), client: client))
    }
}
