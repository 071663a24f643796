import AutosaveHistory
import AutosaveKit

/// `history`: the versions of a file (following it across moves), or of every file below a
/// folder, newest first; with `deleted`, the files below a folder whose latest version is their
/// removal (what `restore` can bring back).
public struct HistoryMethod: ControlMethod {
    public static var method: RPCMethod { .history }

    /// A file or a folder, relative to the root; "" (or absent) for the whole tree.
    public var path: String
    /// At most this many versions.
    public var limit: Int?
    /// Only removed files that can be brought back.
    public var isDeletedOnly: Bool

    public init(path: String = "", limit: Int? = nil, isDeletedOnly: Bool = false) {
        self.path = path
        self.limit = limit
        self.isDeletedOnly = isDeletedOnly
    }

    public var params: [JSONMember] {
        var members = [member("path", .string(path))]
        if let limit { members.append(member("limit", .number(String(limit)))) }
        if isDeletedOnly { members.append(member("deleted", .bool(true))) }
        return members
    }

    public init(params: [JSONMember], content: [UInt8]?) throws(RPCError) {
        let params = RPCParams(members: params)
        let limit = try params.optionalInt("limit")
        if let limit, limit < 1 { throw .invalidParams("`limit` must be at least 1, got \(limit)") }
        self.init(path: try params.optionalString("path") ?? "", limit: limit, isDeletedOnly: try params.optionalBool("deleted") ?? false)
    }

    /// `{versions: [...]}`, newest first.
    public struct Result: ControlResult {
        public var versions: [Version]

        public init(versions: [Version]) { self.versions = versions }

        public var json: JSONValue { .object([member("versions", .array(versions.map(\.json)))]) }

        public init(json: JSONValue) throws(RPCError) {
            var versions: [Version] = []
            for item in try RPCParams(result: json).array("versions") { versions.append(try Version(json: item)) }
            self.init(versions: versions)
        }
    }
}

extension Version {
    /// `{version, path, time, timeMs, who, kind, size?, from?, program?, pid?, added?, removed?, parent?}`:
    /// `time` is RFC 3339 (UTC); `added` and `removed` are absent when unknown; `parent` (a
    /// conflict copy's) when known.
    public var json: JSONValue {
        var members = [
            member("version", .number(String(id))), member("path", .string(path)), member("time", .string(timestamp)),
            member("timeMs", .number(String(time))), member("who", .string(who)), member("kind", .string(kind.rawValue)),
        ]
        if let size { members.append(member("size", .number(String(size)))) }
        if let from { members.append(member("from", .string(from))) }
        if let program { members.append(member("program", .string(program))) }
        if let pid { members.append(member("pid", .number(String(pid)))) }
        if let added { members.append(member("added", .number(String(added)))) }
        if let removed { members.append(member("removed", .number(String(removed)))) }
        if let parent { members.append(member("parent", .number(String(parent)))) }
        return .object(members)
    }

    /// Reads a version as `json` writes it.
    ///
    /// - Throws: `RPCError.invalidParams` naming the member missing or of the wrong type.
    public init(json: JSONValue) throws(RPCError) {
        let fields = try RPCParams(result: json)
        let kindName = try fields.string("kind")
        guard let kind = VersionKind(rawValue: kindName) else { throw .invalidParams("`kind` is not a kind of version: \(kindName)") }
        let id = try fields.int("version")
        let time = try fields.int("timeMs")
        self.init(
            id: Int64(id), path: try fields.string("path"), time: Int64(time), who: try fields.string("who"), kind: kind,
            size: try fields.optionalInt("size"), from: try fields.optionalString("from"), program: try fields.optionalString("program"),
            pid: try fields.optionalInt("pid").map { Int32(truncatingIfNeeded: $0) }, digest: nil,
            added: try fields.optionalInt("added"), removed: try fields.optionalInt("removed"),
            parent: try fields.optionalInt("parent").map(Int64.init))
    }
}
