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

    /// A removed file that could not be brought back, and why.
    public struct Refusal: Sendable, Equatable {
        public var path: String
        public var reason: String

        public init(path: String, reason: String) {
            self.path = path
            self.reason = reason
        }
    }

    /// `{files: [{path, revision}], refused: [{path, reason}]}`: the files brought back, newest
    /// removal first, and those that could not be (a link out of the root where their folder was,
    /// say); the answer comes once every file brought back is durable (in the journal), as any
    /// edit's does.
    public struct Result: ControlResult {
        public var files: [EditedFile]
        public var refused: [Refusal]

        public init(files: [EditedFile], refused: [Refusal] = []) {
            self.files = files
            self.refused = refused
        }

        public var json: JSONValue {
            .object([
                member("files", .array(files.map(\.json))),
                member(
                    "refused",
                    .array(refused.map { .object([member("path", .string($0.path)), member("reason", .string($0.reason))]) })),
            ])
        }

        public init(json: JSONValue) throws(RPCError) {
            let result = try RPCParams(result: json)
            var files: [EditedFile] = []
            for item in try result.array("files") { files.append(try EditedFile(json: item)) }
            var refused: [Refusal] = []
            for item in try result.optionalArray("refused") ?? [] {
                let fields = try RPCParams(result: item)
                refused.append(Refusal(path: try fields.string("path"), reason: try fields.string("reason")))
            }
            self.init(files: files, refused: refused)
        }
    }
}
