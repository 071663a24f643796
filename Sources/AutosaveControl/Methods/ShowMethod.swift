import AutosaveHistory
import AutosaveKit

/// `show`: a version's content, byte for byte (`version`: an id from `history`, or `-N` for N
/// versions before the latest; or `at`: the version the file held at that moment, in milliseconds
/// since the Unix epoch).
public struct ShowMethod: ControlMethod {
    public static var method: RPCMethod { .show }

    public var path: String
    public var version: VersionSelector
    /// Whether the content comes as raw bytes after the answer's line (`contentBytes`).
    public var isRaw: Bool

    public init(path: String, version: VersionSelector, isRaw: Bool = false) {
        self.path = path
        self.version = version
        self.isRaw = isRaw
    }

    public var params: [JSONMember] {
        [member("path", .string(path))] + version.members + [member("raw", .bool(isRaw))]
    }

    public init(params: [JSONMember], content: [UInt8]?) throws(RPCError) {
        let params = RPCParams(members: params)
        self.init(path: try params.string("path"), version: try params.versionSelector(), isRaw: try params.optionalBool("raw") ?? false)
    }

    /// The version (as `history` lists it) and its content, as `read` gives content; a removal
    /// has none (`exists: false`).
    public struct Result: ControlResult {
        public var version: Version
        public var content: ReadMethod.Result.Content

        public init(version: Version, content: ReadMethod.Result.Content) {
            self.version = version
            self.content = content
        }

        public var json: JSONValue {
            let body = ReadMethod.Result(path: version.path, revision: 0, content: content).json
            guard case .object(let members) = body else { return body }
            return .object([member("version", version.json)] + members.filter { $0.key != "path" && $0.key != "revision" })
        }

        public init(json: JSONValue) throws(RPCError) {
            let fields = try RPCParams(result: json)
            let version = try Version(json: try fields.value("version", describedAs: "an object"))
            // The content members are read as `read`'s are.
            guard case .object(let members) = json else { throw .invalidParams("expected an object") }
            let body = JSONValue.object(members + [member("path", .string(version.path)), member("revision", .number("0"))])
            self.init(version: version, content: try ReadMethod.Result(json: body).content)
        }
    }
}

extension VersionSelector {
    /// The members that carry it in a request: `version` (`"12"`, `"-1"`), or for a time `at`, in
    /// milliseconds since the epoch. A member of its own, so that the `version` an older agent
    /// reads keeps its meaning, and the moment is the one the client computed (`10 minutes ago`
    /// is counted back from the client's clock, not from when the agent reads it).
    var members: [JSONMember] {
        if case .time(let milliseconds) = self { return [member("at", .number(String(milliseconds)))] }
        return [member("version", .string(description))]
    }
}

extension RPCParams {
    /// The version a request names: `at` (a time) or `version`, not both.
    func versionSelector() throws(RPCError) -> VersionSelector {
        guard let at = try optionalInt("at") else { return try versionSelector("version") }
        guard !has("version") else { throw .invalidParams("give `version` or `at`, not both") }
        return .time(Int64(at))
    }

    /// `key` as a version: a string (`"12"`, `"-1"`) or a whole number.
    func versionSelector(_ key: String) throws(RPCError) -> VersionSelector {
        let given = try value(key, describedAs: "a version id, or -N for N versions before the latest")
        let text: String
        switch given {
        case .string(let string): text = string
        case .number(let number): text = number
        default: throw .invalidParams("`\(key)` must be a version id or -N, got \(given.jsonText)")
        }
        guard let selector = VersionSelector(text) else {
            throw .invalidParams("`\(key)` must be a version id (as `history` lists them) or -N (N versions before the latest), got \(text)")
        }
        return selector
    }
}
