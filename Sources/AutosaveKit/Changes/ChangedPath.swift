/// One path in an answer to "what changed since?": its latest change only.
public struct ChangedPath: Sendable, Hashable {
    /// Relative to the root; a folder's ends in `/`.
    public var path: String
    /// The latest change of the path: `created`, `modified`, `removed` or `moved` (here).
    public var kind: FileChange.Kind
    /// For `moved`: where it came from (that path is listed too, `removed`, unless it changed
    /// again since).
    public var from: String?
    /// The path is one the agent ignores (an editor's dropping, a `watch.ignore` pattern): git
    /// wants it, clients asking about the project's files do not.
    public var isIgnored: Bool

    public init(path: String, kind: FileChange.Kind, from: String? = nil, isIgnored: Bool = false) {
        self.path = path
        self.kind = kind
        self.from = from
        self.isIgnored = isIgnored
    }
}

/// The answer to "what changed since this clock?".
public struct ChangesSince: Sendable, Equatable {
    /// Where the answer stands: hand it back next time.
    public var clock: ChangeClock
    /// The paths changed after the clock asked about, each once, in the order of their latest
    /// change; empty when `isFresh`.
    public var changes: [ChangedPath]
    /// The clock asked about cannot be answered exactly (another run's, older than the changes
    /// kept, or changes were lost since: an overflow, a rescan, directories not watched): the
    /// client must look at everything itself.
    public var isFresh: Bool

    public init(clock: ChangeClock, changes: [ChangedPath], isFresh: Bool) {
        self.clock = clock
        self.changes = changes
        self.isFresh = isFresh
    }
}
