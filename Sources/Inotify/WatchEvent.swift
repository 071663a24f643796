import SystemPackage

/// What the watcher thread reports about one watched tree, in kernel order.
///
/// Paths are relative to the watched root, `/`-separated, never with a leading slash. Raw file
/// events are not settled yet: one editor save is several of them.
public enum WatchEvent: Sendable, Equatable {
    /// A kernel event on a file (anything that is not a watched directory).
    case file(FileEvent)
    /// A directory was created or moved into the tree. It is already watched; `files` lists what
    /// was found inside it (recursively) after the watch was in place.
    case directoryAppeared(path: String, files: [String])
    /// A watched directory was renamed inside the tree; every path below it now starts with `to`.
    case directoryMoved(from: String, to: String)
    /// The files below `path` as listed right after it moved (follows `directoryMoved`): what
    /// settled while the move's event was on its way looked at a disk already past it.
    case directoryListed(path: String, files: [String])
    /// A watched directory was deleted or moved out of the tree; its watches are gone.
    case directoryRemoved(path: String)
    /// A directory turned out to be another program's private directory (its marker file
    /// appeared): its watches are gone, and it is to be forgotten without reporting anything.
    case directoryIgnored(path: String)
    /// The caller's own directory inside the tree (`ownDirectory`) was deleted or renamed away;
    /// the watcher goes on (its cookies live elsewhere), and the owner decides whether and when
    /// to make it again.
    case controlDirectoryLost(path: String)
    /// The watched root itself was renamed (it may now be anywhere, even outside where it was);
    /// watches and relative paths still hold, absolute paths made from the old root do not.
    case rootMoved
    /// The kernel's event queue overflowed: events were lost. A `rescanned` follows.
    case overflow
    /// A fresh listing of `scope` (directory paths, `""` for the whole tree), after an overflow
    /// or a periodic rescan. Compare it with what was known to find what changed.
    case rescanned(DirectoryScan)
    /// The watch limit was hit for the first time; `unwatched` directories are only rescanned.
    case watchLimit(limit: Int, unwatched: Int)
    /// A directory the kernel would not watch for another reason than the limit (its absolute
    /// path is longer than `PATH_MAX`, it cannot be entered): what happens in it goes unseen.
    /// Reported once per directory.
    case watchBlind(path: String, reason: Errno)
    /// A name the caller's rules ignore changed (a file written, made or removed; a directory
    /// made, moved or removed, or met by a scan after the first): it is not watched or reported as
    /// a change of the tree, but whoever keeps a record of what changed (for git) must know.
    case ignoredChanged(path: String, isDirectory: Bool)
    /// Every event that happened before the barrier with this number was requested precedes it.
    case barrier(UInt64)
    /// Reading the kernel queue failed; no further events will arrive.
    case failed(InotifyError)
}

/// One kernel event on a name inside a watched directory.
public struct FileEvent: Sendable, Equatable {
    /// What happened to the name, reduced to what the agent distinguishes.
    public enum Kind: Sendable, Equatable {
        case created, modified, closedAfterWrite, attributesChanged, deleted, movedFrom, movedTo
    }

    public var path: String
    public var kind: Kind
    /// Pairs a `movedFrom` with its `movedTo`; zero for other kinds.
    public var cookie: UInt32
    /// For `movedTo`: the name it came from when that name is ignored (a temp file such as
    /// `sed1Xy2Zq` or the agent's own temp), so provenance survives the filter.
    public var renamedFromIgnored: String?

    public init(path: String, kind: Kind, cookie: UInt32 = 0, renamedFromIgnored: String? = nil) {
        self.path = path
        self.kind = kind
        self.cookie = cookie
        self.renamedFromIgnored = renamedFromIgnored
    }
}

/// A listing of part of the watched tree.
public struct DirectoryScan: Sendable, Equatable {
    /// A file found by the scan, with its status-change time when the scan asked for it.
    public struct File: Sendable, Equatable {
        public var path: String
        /// `st_ctim` in nanoseconds since the epoch; nil when the scan did not stat files.
        public var changeTime: Int64?
    }

    /// The files of one directory, by name: a big tree is listed without building a path per file.
    public struct Listing: Sendable, Equatable {
        /// The directory's path relative to the root (`""` for the root).
        public var directory: String
        /// The files' names, in the order they were read (the order of `changeTimes`).
        public var names: FileNames
        /// `st_ctim` per name (ns since the epoch), when the scan stat'ed files.
        public var changeTimes: [Int64]?
    }

    /// Directory paths the scan covers; `""` is the whole tree. A non-recursive scope lists
    /// only the named directories themselves.
    public var scope: [String]
    public var isRecursive: Bool
    /// What each listed directory holds, files only.
    public var listings: [Listing]
    /// How many files the scan found; it stays when the listings are handed on and emptied.
    public internal(set) var fileCount: Int
    /// Directories found, watched or not.
    public var directories: Int
    /// Watches in place for this tree after the scan.
    public var watches: Int
    /// Directories that could not be watched (the watch limit, or a permission error).
    public var unwatched: [String]
    /// Changes older than this (wall clock, ns since the epoch) were already seen by the watcher;
    /// a file whose `changeTime` is at or after it may have changed unseen. Nil: unknown.
    public var unseenSince: Int64?
    /// How long the scan took, in milliseconds.
    public var milliseconds: Double
    /// Ignored files the watcher was asked to point out (relative paths), first walk only.
    public var leftovers: [String] = []
    /// Directories the rules ignore (relative paths), first walk only; later scans report them
    /// as `ignoredChanged` events.
    public var ignoredDirectories: [String] = []
}

extension DirectoryScan {
    /// Every file found, with its relative path (built on demand).
    public var files: [File] {
        listings.flatMap { listing in
            listing.names.enumerated().map { index, name in
                File(
                    path: listing.directory.isEmpty ? name : listing.directory + "/" + name,
                    changeTime: listing.changeTimes?[index])
            }
        }
    }
}
