/// What happened to the root itself.
public enum RootChange: Sendable, Equatable {
    /// Renamed; this is its absolute path now.
    case moved(to: String)
    /// Deleted.
    case removed
}

/// The watcher's figures, as `status` shows them.
public struct WatcherStatus: Sendable, Equatable {
    /// Files the watcher knows in the tree.
    public var files: Int
    /// Names with events still inside their settle window.
    public var pendingChanges: Int
    /// External changes reported since the start.
    public var reportedChanges: Int
    /// Pending names held back because a process still has the file open for writing.
    public var heldForWriters: Int = 0

    public init(files: Int, pendingChanges: Int, reportedChanges: Int, heldForWriters: Int = 0) {
        self.files = files
        self.pendingChanges = pendingChanges
        self.reportedChanges = reportedChanges
        self.heldForWriters = heldForWriters
    }
}
