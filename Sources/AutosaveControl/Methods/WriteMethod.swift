import AutosaveKit
import FoundationEssentials

/// `write`: replaces the buffer's content; answered once the edit is durable.
public struct WriteMethod: ControlMethod {
    public typealias Result = EditedFile
    public static var method: RPCMethod { .write }

    public var path: String
    public var content: Content
    public var change: ChangeParams
    /// `createParents`: make the missing folders of a new file instead of refusing it.
    public var createParents: Bool

    /// The new content, exactly one of the three forms.
    public enum Content: Sendable, Equatable {
        /// `content`: UTF-8 text in the line.
        case text(String)
        /// `contentBase64`: any bytes, as base64 in the line.
        case base64([UInt8])
        /// `contentBytes`: raw bytes after the line. A client leaves `bytes` nil and gives them to
        /// `ControlClient.call(_:content:)`, which announces them. A request the agent read always
        /// holds this case, with the content's bytes whichever of the three forms they came in.
        case raw(bytes: [UInt8]?)
    }

    public init(path: String, content: Content, change: ChangeParams = ChangeParams(), createParents: Bool = false) {
        self.path = path
        self.content = content
        self.change = change
        self.createParents = createParents
    }

    public var params: [JSONMember] {
        var members = [member("path", .string(path))]
        switch content {
        case .text(let text): members.append(member("content", .string(text)))
        case .base64(let bytes): members.append(member("contentBase64", .string(Data(bytes).base64EncodedString())))
        case .raw: break
        }
        members += change.members
        if createParents { members.append(member("createParents", .bool(true))) }
        return members
    }

    public init(params: [JSONMember], content: [UInt8]?) throws(RPCError) {
        let params = RPCParams(members: params, raw: content)
        let path = try params.string("path")
        let client = try params.clientName()
        let bytes = try params.content()
        let changeID = try params.optionalUUID("changeId")
        let ifRevision = try params.optionalInt("ifRevision")
        self.init(
            path: path, content: .raw(bytes: bytes), change: ChangeParams(changeID: changeID, ifRevision: ifRevision, client: client),
            createParents: try params.optionalBool("createParents") ?? false)
    }

    /// The new content's bytes, as the agent read them.
    var bytes: [UInt8] {
        switch content {
        case .text(let text): Array(text.utf8)
        case .base64(let bytes): bytes
        case .raw(let bytes): bytes ?? []
        }
    }
}
