/// Everything the agent can be told, with the defaults it uses when told nothing.
///
/// The JSON names of these properties are an interface (`autosave.delayMs`, `watch.ignore`, …):
/// see `ConfigurationSchema` for the full list, ranges and one-line help.
public struct Configuration: Sendable, Equatable {
    /// The folder to keep safe; nil means the directory given on the command line, else the
    /// current directory. Relative to the configuration file's folder when set there.
    public var root: String?
    /// Where the agent keeps its socket, journal, conflict copies and lock; relative to the root.
    public var stateDir = ".autosave"
    public var autosave = Autosave()
    public var watch = Watch()
    public var write = Write()
    public var conflicts = Conflicts()
    public var journal = Journal()
    public var history = History()
    public var limits = Limits()
    public var log = Log()

    public init() {}

    /// The autosave window.
    public struct Autosave: Sendable, Equatable {
        /// Quiet time after the latest edit before a buffer is saved.
        public var delayMs = 1000
        /// Longest a dirty buffer waits under continuous edits.
        public var maxDelayMs = 10_000
    }

    /// The watcher.
    public struct Watch: Sendable, Equatable {
        /// Quiet time per path before a burst of events becomes one change.
        public var settleMs = 50
        /// Longest a name that never goes quiet waits before its change is reported anyway.
        public var maxSettleMs = 1000
        /// Extra ignore patterns, with .gitignore semantics.
        public var ignore: [String] = []
        /// Seconds between rescans of unwatched directories; 0 means only when trouble makes
        /// them necessary (then every 30 s).
        public var rescanIntervalS = 0
    }

    /// Saving.
    public struct Write: Sendable, Equatable {
        /// Whether saves are fsync'd (file and directory) before they count as done.
        public var fsync = true
        /// What to do with a file that has several hard links.
        public var hardLinks = HardLinkPolicy.preserve
    }

    /// Overlapping edits.
    public struct Conflicts: Sendable, Equatable {
        /// Whether non-overlapping edits are merged line by line.
        public var merge = true
        /// Which side keeps the path when edits overlap; the other becomes a conflict copy.
        public var keep = ConflictSide.disk
        /// Conflict copies per file before the agent warns (it never deletes them).
        public var maxCopiesPerFile = 20
    }

    /// The edit journal.
    public struct Journal: Sendable, Equatable {
        public var enabled = true
        public var fsync = true
    }

    /// The history of every version of every file (`autosave history`, `show`, `restore`).
    public struct History: Sendable, Equatable {
        /// Whether versions are recorded at all; off, no history database is made.
        public var enabled = true
        /// Files larger than this are not recorded (their versions are not kept).
        public var maxFileBytes = 1 << 20
        /// Binary files (a NUL in their first 8000 bytes) larger than this are not recorded.
        public var maxBinaryBytes = 256 << 10
        /// The database's size that pruning brings it under, oldest versions first.
        public var maxBytes = 1 << 30
        /// Versions older than this many days are dropped (a file's latest version excepted).
        public var maxAgeDays = 365
        /// Whether every file is stored once after `ready`, so that the first outside change to a
        /// file no buffer ever read has a version before it.
        public var baseline = BaselineSetting.auto
    }

    /// `history.baseline`: `"auto"`, `true` or `false`.
    public enum BaselineSetting: Sendable, Equatable {
        /// On for trees up to `HistoryBaseline.autoFileLimit` files and `autoByteLimit` bytes
        /// under `history.maxFileBytes`; above, off, with a log line saying what it would cost.
        case auto
        case on
        case off
    }

    /// Sizes the agent refuses, and how long it may take to stop.
    public struct Limits: Sendable, Equatable {
        public var maxFileBytes = 64 << 20
        public var maxRequestBytes = 64 << 20
        /// Longest a stop (a signal, a client's `stop`) may take before the agent exits anyway:
        /// a call blocked on a hung mount must not keep it, and its lock, for ever.
        public var stopTimeoutMs = 10_000
    }

    /// The agent's log on standard error.
    public struct Log: Sendable, Equatable {
        public var level = LogLevel.info
        public var format = LogFormat.text
    }
}

/// What a save does to a file with more than one hard link.
public enum HardLinkPolicy: String, Sendable, CaseIterable {
    /// Write in place, so every link sees the new content.
    case preserve
    /// Replace the file, so this path gets a new inode and the other links keep the old content.
    case `break`
}

/// The side of an overlap that keeps the file's path.
public enum ConflictSide: String, Sendable, CaseIterable {
    case disk, buffer
}

/// The least severe log level that is printed.
public enum LogLevel: String, Sendable, CaseIterable {
    case trace, debug, info, notice, warning, error
}

/// How log lines are written.
public enum LogFormat: String, Sendable, CaseIterable {
    /// `2026-11-21T22:00:00.123Z info saved path=a.txt revision=3`
    case text
    /// One JSON object per line with `ts`, `level`, `event` and the fields.
    case json
}
