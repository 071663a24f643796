import AutosaveKit

/// `restore`: writes a version back, through the buffer, as an edit of client `restore` (merged
/// with unsaved edits by the usual rules, journaled, and itself a new version once saved); to
/// `to` instead of its own path when given. A removal's version brings back the content it kept.
public struct RestoreMethod: ControlMethod {
    public static var method: RPCMethod { .restore }

    public var path: String
    public var version: VersionSelector
    /// Where the content goes; nil: back to `path`.
    public var destination: String?

    public init(path: String, version: VersionSelector, to destination: String? = nil) {
        self.path = path
        self.version = version
        self.destination = destination
    }

    public var params: [JSONMember] {
        var members = [member("path", .string(path))] + version.members
        if let destination { members.append(member("to", .string(destination))) }
        return members
    }

    public init(params: [JSONMember], content: [UInt8]?) throws(RPCError) {
        let params = RPCParams(members: params)
        self.init(path: try params.string("path"), version: try params.versionSelector(), to: try params.optionalString("to"))
    }

    /// The file written and its buffer's revision, as any edit answers.
    public typealias Result = EditedFile
}
