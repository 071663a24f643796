import SystemPackage

/// A failure of the kernel's inotify interface, with the errno and the path it concerns.
///
/// Each case carries what a caller needs to act: the watch limit tells the user which sysctl to
/// raise, an unreadable directory names itself.
public enum InotifyError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The inotify instance could not be created (`EMFILE` when `max_user_instances` is reached).
    case initializationFailed(Errno)
    /// A directory could not be watched for a reason other than the watch limit.
    case watchFailed(path: String, Errno)
    /// `inotify_add_watch` failed with `ENOSPC`: the per-user watch limit is exhausted.
    case watchLimitReached(path: String, limit: Int)
    /// A directory could not be listed.
    case listFailed(path: String, Errno)
    /// Reading events from the inotify instance failed.
    case readFailed(Errno)
    /// The private directory used for barrier cookies could not be prepared.
    case controlDirectoryFailed(path: String, Errno)
    /// The root to watch is missing or is not a directory.
    case rootUnavailable(path: String, Errno)

    public var description: String {
        switch self {
        case .initializationFailed(let errno):
            "cannot create an inotify instance: \(errno.description) — raise fs.inotify.max_user_instances "
                + "(sysctl -w fs.inotify.max_user_instances=512) or close other watchers"
        case .watchFailed(let path, let errno):
            "cannot watch directory \(path): \(errno.description); its changes are found by rescans only"
        case .watchLimitReached(let path, let limit):
            "cannot watch directory \(path): the inotify watch limit (\(limit)) is reached; "
                + "raise it with `\(KernelLimits.raiseWatchLimitCommand(to: max(limit * 2, 524_288)))`"
        case .listFailed(let path, let errno):
            "cannot list directory \(path): \(errno.description); it is skipped"
        case .readFailed(let errno):
            "cannot read inotify events: \(errno.description)"
        case .controlDirectoryFailed(let path, let errno):
            "cannot prepare the watcher's cookie directory \(path): \(errno.description)"
        case .rootUnavailable(let path, let errno):
            "cannot watch \(path): \(errno.description)"
        }
    }
}
