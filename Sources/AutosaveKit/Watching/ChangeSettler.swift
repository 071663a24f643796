import Inotify

/// Turns bursts of kernel events into one change per name: the settle window.
///
/// A pure state machine, with no clock: callers pass the time in, ask for the next deadline,
/// and take what is due. Each event on a name pushes that name's deadline to `settle` after it.
/// A rename pairs its two names by cookie; the source waits for its destination, so the pair
/// settles as one `moved` instead of a `removed` and a `created`.
struct ChangeSettler<Instant: InstantProtocol> where Instant.Duration == Duration {
    /// A name with events still inside its window.
    struct Pending {
        var deadline: Instant
        /// For a rename destination: where it came from.
        var movedFrom: String?
        /// For a rename source: where it went, while that destination is pending.
        var movedTo: String?
    }

    /// A name whose window has closed, with its rename partner when it has one.
    struct Due: Equatable {
        var path: String
        var movedFrom: String?
    }

    let settle: Duration
    private(set) var pending: [String: Pending] = [:]
    /// Rename sources waiting for their `movedTo`, by cookie.
    private var sources: [UInt32: String] = [:]

    init(settle: Duration) {
        self.settle = settle
    }

    /// Records one event on a file name.
    mutating func record(_ event: FileEvent, at now: Instant) {
        let deadline = now.advanced(by: settle)
        var entry = pending[event.path] ?? Pending(deadline: deadline)
        entry.deadline = deadline
        switch event.kind {
        case .movedFrom:
            if sources.count > 1024 { sources.removeAll() }
            sources[event.cookie] = event.path
        case .movedTo:
            if let source = sources.removeValue(forKey: event.cookie), source != event.path {
                entry.movedFrom = source
                pending[source, default: Pending(deadline: deadline)].movedTo = event.path
                pending[source]?.deadline = deadline
            }
        default:
            break
        }
        pending[event.path] = entry
    }

    /// Records that a name exists without an event for it (found in a new directory's listing).
    mutating func touch(_ path: String, at now: Instant) {
        let deadline = now.advanced(by: settle)
        var entry = pending[path] ?? Pending(deadline: deadline)
        entry.deadline = max(entry.deadline, deadline)
        pending[path] = entry
    }

    /// When the earliest pending window closes; nil when nothing is pending.
    var nextDeadline: Instant? { pending.values.map(\.deadline).min() }

    /// Whether `path` has events inside its window.
    func isPending(_ path: String) -> Bool { pending[path] != nil }

    /// Takes every name whose window has closed by `now`, in path order. A rename source whose
    /// destination is still pending stays; it leaves with its destination.
    mutating func takeDue(at now: Instant) -> [Due] {
        var due: [Due] = []
        for (path, entry) in pending where entry.deadline <= now {
            if let target = entry.movedTo, let partner = pending[target], partner.movedFrom == path, partner.deadline > now {
                continue
            }
            if let target = entry.movedTo, pending[target]?.movedFrom == path {
                continue  // leaves with its destination, below
            }
            due.append(Due(path: path, movedFrom: entry.movedFrom))
        }
        for item in due {
            pending[item.path] = nil
            if let source = item.movedFrom { pending[source] = nil }
        }
        return due.sorted { $0.path < $1.path }
    }

    /// A directory was renamed: pending names below it follow.
    mutating func moveDirectory(from: String, to: String) {
        for (path, entry) in pending where KnownFiles.isSame(path, orBelow: from) {
            pending[path] = nil
            pending[to + path.dropFirst(from.count)] = entry
        }
    }
}
