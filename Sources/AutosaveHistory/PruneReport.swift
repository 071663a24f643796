/// What a pruning pass did: the versions and contents it dropped, and the database's size around it.
public struct PruneReport: Sendable, Equatable {
    /// Versions dropped, by the schedule and by the cap together.
    public var versions = 0
    /// Of them, the ones the cap dropped (the database was over `maxBytes` after the schedule).
    public var versionsOverCap = 0
    /// Contents no remaining version held, deleted with their bytes.
    public var contents = 0
    /// Contents compressed again because the content they were compressed against was deleted.
    public var reencoded = 0
    /// The database's size (main file and WAL) before and after the pass, in bytes.
    public var bytesBefore: Int64 = 0
    public var bytesAfter: Int64 = 0

    /// A report of nothing done yet.
    public init() {}
}

/// What `VersionStore.forget(path:)` removed.
public struct ForgetReport: Sendable, Equatable {
    /// The path as given.
    public var path: String
    /// Versions removed: the path's (under the names it had before it moved too) and those below it.
    public var versions = 0
    /// Contents deleted with their bytes, which no other version held.
    public var contents = 0
    /// Contents the forgotten versions held that stay, because versions of other paths hold the
    /// same bytes: those are the other paths' to forget.
    public var sharedContents = 0
    /// Other contents compressed again because one they were compressed against was deleted.
    public var reencoded = 0
    /// The database's size (main file and WAL) before and after, in bytes.
    public var bytesBefore: Int64 = 0
    public var bytesAfter: Int64 = 0

    /// A report of nothing removed yet from `path`.
    public init(path: String) {
        self.path = path
    }
}
