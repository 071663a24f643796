import AutosaveKit

/// What a client asks about the tree's changes: since which clock, and which paths (LSP globs);
/// the params `changes` and `subscribe` share.
public struct ChangeFilter: Sendable, Equatable {
    /// The clock the client last got (`autosave:<instance>:<seq>`); nil: the first question,
    /// answered `fresh`. Any other text is answered `fresh` too: the client rescans, never
    /// misses a change.
    public var since: String?
    /// Only paths matching one of these; empty: every path.
    public var globs: [String]

    /// A filter as a client writes it; the agent compiles the globs when it reads the request.
    public init(since: String? = nil, globs: [String] = []) {
        self.since = since
        self.globs = globs
    }

    /// Whether the client asked for changes at all (a `subscribe` without either gets events).
    public var isEmpty: Bool { since == nil && globs.isEmpty }

    var members: [JSONMember] {
        var members: [JSONMember] = []
        if let since { members.append(member("since", .string(since))) }
        if !globs.isEmpty { members.append(member("glob", .array(globs.map { .string($0) }))) }
        return members
    }

    /// - Throws: `RPCError.invalidParams` for a `since` that is not a string, or a `glob` that is
    ///   neither a string nor a list of strings, or one that cannot be used (`PathGlobError`).
    init(_ params: RPCParams) throws(RPCError) {
        since = try params.optionalString("since")
        switch params.value("glob") {
        case nil, .null?: globs = []
        case .string(let glob)?: globs = [glob]
        case .array?: globs = try params.strings("glob")
        default: throw .invalidParams("`glob` must be a glob (\"**/*.py\") or a list of them; nothing was done")
        }
        var compiled: [PathGlob] = []
        for glob in globs {
            do throws(PathGlobError) { compiled.append(try PathGlob(glob)) } catch {
                throw .invalidParams("`glob`: \(error); nothing was done")
            }
        }
        patterns = compiled.isEmpty ? nil : compiled
    }

    /// The globs compiled when the agent read the request; nil when every path is wanted (and
    /// on the client's side, which sends `globs` as text).
    public private(set) var patterns: [PathGlob]? = nil

    /// The clock asked about, read; nil when absent or not one of ours.
    var clock: ChangeClock? { since.flatMap(ChangeClock.init(token:)) }
}

extension ChangesSince {
    /// `{clock, changes: [{path, kind, from?}], fresh}` as `changes` answers it and `subscribe`
    /// notifies it.
    var json: JSONValue {
        .object([
            member("clock", .string(clock.description)),
            member("changes", .array(changes.map(\.json))),
            member("fresh", .bool(isFresh)),
        ])
    }
}

extension ChangedPath {
    var json: JSONValue {
        var members = [member("path", .string(path)), member("kind", .string(kind.rawValue))]
        if let from { members.append(member("from", .string(from))) }
        if isIgnored { members.append(member("ignored", .bool(true))) }
        return .object(members)
    }
}
