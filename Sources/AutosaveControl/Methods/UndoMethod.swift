import AutosaveKit

/// `undo`: takes back one writer's changes since a time, keeping everyone else's, each file's
/// as an edit of client `undo` (saved at once: a version that can be undone in turn).
public struct UndoMethod: ControlMethod {
    public static var method: RPCMethod { .undo }

    /// The writer as history names it: `cli`, `nvim:41` or `nvim`, `mcp:NAME`, `external`,
    /// `external:sed`.
    public var who: String
    /// Milliseconds since the Unix epoch: only versions from then on are taken back (nil: all).
    public var since: Int64?
    /// A file or folder relative to the root; "" for the whole tree.
    public var path: String
    /// Change nothing; each file's `diff` says what would change.
    public var isDryRun: Bool

    public init(who: String, since: Int64? = nil, path: String = "", isDryRun: Bool = false) {
        self.who = who
        self.since = since
        self.path = path
        self.isDryRun = isDryRun
    }

    public var params: [JSONMember] {
        var members = [member("who", .string(who)), member("path", .string(path)), member("dryRun", .bool(isDryRun))]
        if let since { members.append(member("since", .number(String(since)))) }
        return members
    }

    public init(params: [JSONMember], content: [UInt8]?) throws(RPCError) {
        let fields = RPCParams(members: params)
        self.init(
            who: try fields.string("who"), since: try fields.optionalInt("since").map(Int64.init),
            path: try fields.optionalString("path") ?? "", isDryRun: try fields.optionalBool("dryRun") ?? false)
    }

    /// A version of the writer's left alone, and why.
    public struct Skipped: Sendable, Equatable {
        public var path: String
        public var version: Int64
        public var reason: String
    }

    /// `{files: [{path, action, revision?, from?, copy?, diff?, versions}], skipped: [{path, version, reason}]}`.
    public struct Result: ControlResult {
        public var files: [UndoneFile]
        public var skipped: [Skipped]

        public init(files: [UndoneFile], skipped: [Skipped]) {
            self.files = files
            self.skipped = skipped
        }

        public var json: JSONValue {
            .object([
                member("files", .array(files.map(Self.json))),
                member(
                    "skipped",
                    .array(
                        skipped.map {
                            .object([
                                member("path", .string($0.path)), member("version", .number(String($0.version))),
                                member("reason", .string($0.reason)),
                            ])
                        })),
            ])
        }

        static func json(_ file: UndoneFile) -> JSONValue {
            var members = [
                member("path", .string(file.path)), member("action", .string(file.action.rawValue)),
                member("versions", .array(file.versions.map { .number(String($0)) })),
            ]
            if let revision = file.revision { members.append(member("revision", .number(String(revision)))) }
            if let from = file.from { members.append(member("from", .string(from))) }
            if let copy = file.copy { members.append(member("copy", .string(copy))) }
            if let diff = file.diff { members.append(member("diff", .string(diff))) }
            return .object(members)
        }

        public init(json: JSONValue) throws(RPCError) {
            let result = try RPCParams(result: json)
            var files: [UndoneFile] = []
            for item in try result.array("files") {
                let fields = try RPCParams(result: item)
                let actionName = try fields.string("action")
                guard let action = UndoneFile.Action(rawValue: actionName) else {
                    throw .invalidParams("`action` is not an undo's action: \(actionName)")
                }
                var versions: [Int64] = []
                for version in try fields.optionalArray("versions") ?? [] {
                    guard case .number(let text) = version, let id = Int64(text) else { throw .invalidParams("`versions` holds a non-number") }
                    versions.append(id)
                }
                files.append(
                    UndoneFile(
                        path: try fields.string("path"), action: action, revision: try fields.optionalInt("revision"),
                        from: try fields.optionalString("from"), copy: try fields.optionalString("copy"), diff: try fields.optionalString("diff"), versions: versions))
            }
            var skipped: [Skipped] = []
            for item in try result.optionalArray("skipped") ?? [] {
                let fields = try RPCParams(result: item)
                skipped.append(
                    Skipped(path: try fields.string("path"), version: Int64(try fields.int("version")), reason: try fields.string("reason")))
            }
            self.init(files: files, skipped: skipped)
        }
    }
}
