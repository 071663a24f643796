import AutosaveKit

/// `changes`: the paths changed since a clock the client holds (created, modified, removed,
/// moved; the latest change of each; a folder's ends in `/`) and the clock to ask with next
/// time, or `fresh: true` when that cannot be answered exactly and the client must look at
/// everything itself.
///
/// Answered once every kernel event from before the request is taken in and, unless
/// `unsettled`, every change they began has settled: a write made just before the request is
/// in the answer.
public struct ChangesMethod: ControlMethod {
    public static var method: RPCMethod { .changes }

    public var filter: ChangeFilter
    /// Also names whose change is still settling, as `modified`, instead of waiting for them
    /// (they come again, settled, next time); for git's fsmonitor hook, which looks at each.
    public var includesUnsettled: Bool
    /// Also names the agent ignores (marked `ignored`), and every ignored folder (it is not
    /// watched, so anything in it may have changed); for git, which sees those files.
    public var includesIgnored: Bool

    public init(filter: ChangeFilter = ChangeFilter(), includesUnsettled: Bool = false, includesIgnored: Bool = false) {
        self.filter = filter
        self.includesUnsettled = includesUnsettled
        self.includesIgnored = includesIgnored
    }

    public var params: [JSONMember] {
        var members = filter.members
        if includesUnsettled { members.append(member("unsettled", .bool(true))) }
        if includesIgnored { members.append(member("ignored", .bool(true))) }
        return members
    }

    public init(params: [JSONMember], content: [UInt8]?) throws(RPCError) {
        let fields = RPCParams(members: params)
        self.init(
            filter: try ChangeFilter(fields), includesUnsettled: try fields.optionalBool("unsettled") ?? false,
            includesIgnored: try fields.optionalBool("ignored") ?? false)
    }

    /// `{root, clock, changes: [{path, kind, from?, ignored?}], fresh}`; paths are relative to `root`.
    public struct Result: ControlResult {
        public var answer: ChangesSince
        /// The agent's root, which the paths are relative to.
        public var root: String

        public init(_ answer: ChangesSince, root: String) {
            self.answer = answer
            self.root = root
        }

        public var json: JSONValue {
            guard case .object(let members) = answer.json else { return answer.json }
            return .object([member("root", .string(root))] + members)
        }

        public init(json: JSONValue) throws(RPCError) {
            let fields = try RPCParams(result: json)
            root = try fields.string("root")
            let token = try fields.string("clock")
            guard let clock = ChangeClock(token: token) else { throw .invalidParams("`clock` is not an autosave clock: \(token)") }
            var changes: [ChangedPath] = []
            for item in try fields.array("changes") {
                let entry = try RPCParams(result: item)
                let kindName = try entry.string("kind")
                guard let kind = FileChange.Kind(rawValue: kindName) else { throw .invalidParams("`kind` \(kindName) is not a change") }
                changes.append(
                    ChangedPath(
                        path: try entry.string("path"), kind: kind, from: try entry.optionalString("from"),
                        isIgnored: try entry.optionalBool("ignored") ?? false))
            }
            answer = ChangesSince(clock: clock, changes: changes, isFresh: try fields.bool("fresh"))
        }
    }
}
