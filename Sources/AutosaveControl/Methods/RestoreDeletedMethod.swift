import AutosaveKit

/// `restoreDeleted`: brings back every file below a folder whose latest version is its removal,
/// each with the content it had when it was removed, through its buffer as an edit of client
/// `restore` (journaled, saved, and a new version once saved). Files that exist again are not
/// touched: they were not removed for good.
public struct RestoreDeletedMethod: ControlMethod {
    public static var method: RPCMethod { .restoreDeleted }

    /// A folder relative to the root (a file works too); "" for the whole tree.
    public var path: String

    public init(path: String) {
        self.path = path
    }

    public var params: [JSONMember] { [member("path", .string(path))] }

    public init(params: [JSONMember], content: [UInt8]?) throws(RPCError) {
        self.init(path: try RPCParams(members: params).optionalString("path") ?? "")
    }

    /// `{files: [{path, revision}]}`: the files brought back, newest removal first; the answer
    /// comes once every one of them is durable (in the journal), as any edit's does.
    public struct Result: ControlResult {
        public var files: [EditedFile]

        public init(files: [EditedFile]) { self.files = files }

        public var json: JSONValue { .object([member("files", .array(files.map(\.json)))]) }

        public init(json: JSONValue) throws(RPCError) {
            var files: [EditedFile] = []
            for item in try RPCParams(result: json).array("files") { files.append(try EditedFile(json: item)) }
            self.init(files: files)
        }
    }
}
