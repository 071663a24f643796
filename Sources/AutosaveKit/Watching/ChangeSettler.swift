import Inotify

/// Turns bursts of kernel events into one change per name: the settle window.
///
/// A pure state machine, with no clock: callers pass the time in, ask for the next deadline,
/// and take what is due. Each event on a name pushes that name's deadline to `settle` after it.
/// A rename pairs its two names by cookie; the source waits for its destination, so the pair
/// settles as one `moved` instead of a `removed` and a `created`.
///
/// Deadlines only grow (time does), so they queue in order: finding the next one and taking
/// what is due cost O(1) per event, even with tens of thousands of names pending.
public struct ChangeSettler<Instant: InstantProtocol> where Instant.Duration == Duration {
    /// A name with events still inside its window.
    struct Pending {
        var deadline: Instant
        /// For a rename destination: where it came from.
        var movedFrom: String?
        /// For a rename source: where it went, while that destination is pending.
        var movedTo: String?
    }

    /// A name whose window has closed, with its rename partner when it has one.
    public struct Due: Equatable {
        /// The name, relative to the root (for a rename, the destination).
        public var path: String
        /// For a rename destination: the name it came from.
        public var movedFrom: String?
    }

    let settle: Duration
    private(set) var pending: [String: Pending] = [:]
    /// Every deadline ever set, in order; an item is stale once its name's deadline moved on.
    private var queue: [(deadline: Instant, path: String)] = []
    private var queueStart = 0
    /// Rename sources waiting for their `movedTo`, by cookie.
    private var sources: [UInt32: String] = [:]

    /// A settler whose windows close `settle` after the last event on a name.
    public init(settle: Duration) {
        self.settle = settle
    }

    /// Records one event on a file name.
    public mutating func record(_ event: FileEvent, at now: Instant) {
        let deadline = now.advanced(by: settle)
        var entry = pending[event.path] ?? Pending(deadline: deadline)
        switch event.kind {
        case .movedFrom:
            if sources.count > 1024 { sources.removeAll() }
            sources[event.cookie] = event.path
        case .movedTo:
            if let source = sources.removeValue(forKey: event.cookie), source != event.path {
                entry.movedFrom = source
                var origin = pending[source] ?? Pending(deadline: deadline)
                origin.movedTo = event.path
                pending[source] = origin
                schedule(source, at: deadline)
            }
        default:
            break
        }
        pending[event.path] = entry
        schedule(event.path, at: deadline)
    }

    /// Records that a name exists without an event for it (found in a new directory's listing).
    mutating func touch(_ path: String, at now: Instant) {
        if pending[path] == nil { pending[path] = Pending(deadline: now) }
        schedule(path, at: now.advanced(by: settle))
    }

    /// When the earliest pending window closes; nil when nothing is pending.
    mutating func nextDeadline() -> Instant? {
        dropStale()
        return queueStart < queue.count ? queue[queueStart].deadline : nil
    }

    /// When the last window open now closes (later events may open more); nil when none is open.
    var latestDeadline: Instant? { pending.values.map(\.deadline).max() }

    /// Whether `path` has events inside its window.
    func isPending(_ path: String) -> Bool { pending[path] != nil }

    /// Takes every name whose window has closed by `now`, in path order. A rename source
    /// leaves with its destination, when that is pending too.
    public mutating func takeDue(at now: Instant) -> [Due] {
        var due: [Due] = []
        while let next = nextDeadline(), next <= now {
            let path = queue[queueStart].path
            queueStart += 1
            guard let entry = pending[path] else { continue }
            if let target = entry.movedTo, pending[target]?.movedFrom == path { continue }
            pending[path] = nil
            if let source = entry.movedFrom, pending[source]?.movedTo == path { pending[source] = nil }
            due.append(Due(path: path, movedFrom: entry.movedFrom))
        }
        compact()
        return due.sorted { $0.path < $1.path }
    }

    /// A directory was renamed: pending names below it follow.
    mutating func moveDirectory(from: String, to: String) {
        let moving = pending.keys.filter { KnownFiles.isSame($0, orBelow: from) }
        guard !moving.isEmpty else { return }
        for path in moving {
            let renamed = to + path.dropFirst(from.count)
            pending[renamed] = pending.removeValue(forKey: path)
        }
        for index in queueStart..<queue.count where KnownFiles.isSame(queue[index].path, orBelow: from) {
            queue[index].path = to + queue[index].path.dropFirst(from.count)
        }
    }

    private mutating func schedule(_ path: String, at deadline: Instant) {
        guard var entry = pending[path] else { return }
        if deadline > entry.deadline || !queueHolds(path, entry.deadline) {
            entry.deadline = max(entry.deadline, deadline)
            pending[path] = entry
            queue.append((entry.deadline, path))
        }
    }

    /// Whether the newest queue item for `path` carries `deadline` (cheap check on the tail).
    private func queueHolds(_ path: String, _ deadline: Instant) -> Bool {
        guard let last = queue.last, queue.count > queueStart else { return false }
        return last.path == path && last.deadline == deadline
    }

    /// Skips queue items whose name has a later deadline or is no longer pending.
    private mutating func dropStale() {
        while queueStart < queue.count {
            let item = queue[queueStart]
            if let entry = pending[item.path], entry.deadline == item.deadline { return }
            queueStart += 1
        }
    }

    private mutating func compact() {
        if queueStart > 1024 && queueStart * 2 > queue.count {
            queue.removeFirst(queueStart)
            queueStart = 0
        }
    }
}
