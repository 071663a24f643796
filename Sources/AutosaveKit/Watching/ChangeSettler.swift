import ByteNames
import HeapModule
import Inotify

/// Turns bursts of kernel events into settled bursts: the settle window.
///
/// A pure state machine, with no clock: callers pass the time in, ask for the next deadline,
/// and take what is due. Each event on a name pushes that name's deadline to `settle` after it,
/// but never past `maxSettle` after the first event of its window, so a name that never goes
/// quiet is still reported.
///
/// Names joined by a rename settle together, as one burst: `a → c → d`, a swap through a third
/// name, or a name renamed away and back all leave in one piece once every name involved is
/// quiet, with where each name's content came from (`Origin`). The watcher turns that into the
/// net effect; no name is ever left waiting for a partner that already left.
public struct ChangeSettler<Instant: InstantProtocol> where Instant.Duration == Duration {
    /// Where the content a name holds at the end of a burst came from.
    public enum Origin: Sendable, Equatable {
        /// Renamed from this name, as the name was when the burst began.
        case name(String)
        /// Created, or renamed in from outside what is watched (a temp file, another tree).
        case new
        /// Renamed away or deleted, with nothing renamed in since.
        case vacated
    }

    /// Names whose windows have all closed, settled together.
    public struct Burst: Sendable, Equatable {
        /// The names, relative to the root, in order.
        public var names: [String]
        /// For each name whose content did not stay put: where it came from. A name not listed
        /// holds what it held (perhaps modified).
        public var origins: PathMap<Origin>
        /// Names that had no event, only a look asked for (`touch`): whether they exist is news,
        /// their content is not.
        public var unchanged: PathSet
        /// For each name whose content came in by renames the kernel paired: the names it passed
        /// through in this burst, in order. Unlike `origins`, every name it held on the way,
        /// whatever each held at the start (a file made at c, renamed over b, then on to d, came
        /// through c and b).
        public var hops: PathMap<[String]>

        public init(names: [String], origins: PathMap<Origin> = [:], unchanged: PathSet = [], hops: PathMap<[String]> = [:]) {
            self.names = names
            self.origins = origins
            self.unchanged = unchanged
            self.hops = hops
        }
    }

    /// A name with events still inside its window.
    struct Pending {
        var deadline: Instant
        /// The latest the window may close, however busy the name stays.
        var cap: Instant
        var group: Int
        /// Whether an alarm for `deadline` is queued (a new window has none yet).
        var isQueued = false
        /// Whether a kernel event (not only a `touch`) came for the name in this window.
        var hasEvent = false
        /// Whether the last write to the name came with no close after it: some process still has
        /// the file open for writing, and may be half way through.
        var isWriting = false
        /// Whether the window was held open, to its cap, for that writer.
        var isHeld = false
    }

    /// Names linked by renames, and where their content came from.
    struct Group {
        var members: PathSet
        var origins: PathMap<Origin> = [:]
        var hops: PathMap<[String]> = [:]
    }

    /// A deadline as queued; stale once its name's deadline moved on.
    struct Alarm: Comparable {
        var deadline: Instant
        var path: String
        static func < (lhs: Alarm, rhs: Alarm) -> Bool { lhs.deadline < rhs.deadline }
    }

    let settle: Duration
    let maxSettle: Duration
    private(set) var pending: PathMap<Pending> = [:]
    private var groups: [Int: Group] = [:]
    private var nextGroup = 0
    private var alarms = Heap<Alarm>()
    /// Rename sources waiting for their `movedTo`, by cookie, with the origin and hops they carry.
    private var sources: [UInt32: (path: String, origin: Origin, hops: [String])] = [:]

    /// A settler whose windows close `settle` after the last event on a name, and at most
    /// `maxSettle` after the first.
    public init(settle: Duration, maxSettle: Duration? = nil) {
        self.settle = settle
        self.maxSettle = max(maxSettle ?? .seconds(1), settle)
    }

    /// Records one event on a file name.
    public mutating func record(_ event: FileEvent, at now: Instant) {
        let path = event.path
        open(path, at: now)
        pending[path]?.hasEvent = true
        switch event.kind {
        case .created:
            setOrigin(.new, of: path)
            setHops([], of: path)
        case .deleted:
            setOrigin(.vacated, of: path)
            setHops([], of: path)
        case .movedFrom:
            if sources.count > 1024 { sources.removeAll() }
            sources[event.cookie] = (path, origin(of: path), hops(of: path))
            setOrigin(.vacated, of: path)
            setHops([], of: path)
        case .movedTo:
            setHops([], of: path)
            if let source = sources.removeValue(forKey: event.cookie), !source.path.isSameName(as: path) {
                join(source.path, path)
                setOrigin(source.origin, of: path)
                setHops(Array((source.hops + [source.path]).suffix(Self.hopLimit)), of: path)
            } else if let temp = event.renamedFromIgnored, IgnoreRules.isAgentTempName(temp) {
                // The agent's own save of this name: the name's own content, not someone else's.
                break
            } else {
                setOrigin(.new, of: path)
            }
        case .modified, .closedAfterWrite, .attributesChanged:
            break
        }
        switch event.kind {
        case .modified: pending[path]?.isWriting = true
        // A new file at the name (or none): whoever writes it next says so with its own events.
        case .created, .deleted, .movedFrom, .movedTo: pending[path]?.isWriting = false
        case .closedAfterWrite, .attributesChanged: break
        }
        if event.kind == .closedAfterWrite, var entry = pending[path] {
            entry.isWriting = false
            if entry.isHeld {
                // The writer closed the file: its window, quiet for `settle` before it was held,
                // closes now rather than at the cap it was held to.
                entry.isHeld = false
                entry.deadline = now
                entry.isQueued = true
                pending[path] = entry
                alarms.insert(Alarm(deadline: entry.deadline, path: path))
                return
            }
            pending[path] = entry
        }
        push(path, to: now.advanced(by: settle))
    }

    /// Asks for a look at a name without an event for it (found in a new directory's listing, or
    /// known below a directory that moved): it settles as created or removed if that is what it
    /// turns out to be, never as modified.
    mutating func touch(_ path: String, at now: Instant) {
        open(path, at: now)
        push(path, to: now.advanced(by: settle))
    }

    /// When the earliest pending window closes; nil when nothing is pending.
    mutating func nextDeadline() -> Instant? {
        dropStale()
        return alarms.min?.deadline
    }

    /// When the last window open now closes (later events may open more); nil when none is open.
    var latestDeadline: Instant? { pending.values.map(\.deadline).max() }

    /// Whether `path` has events inside its window.
    func isPending(_ path: String) -> Bool { pending[path] != nil }

    /// Takes every burst whose windows have all closed by `now`, ordered by their first name.
    ///
    /// A name written to with no close after it holds its burst until the writer closes the file,
    /// or the window's cap, if `isHeld` says the file is still open for writing (a writer half
    /// way through; not a `truncate(2)`, which modifies a file without opening it).
    public mutating func takeDue(at now: Instant, isHeld: (String) -> Bool = { _ in true }) -> [Burst] {
        var due: [Burst] = []
        while let next = alarms.min, next.deadline <= now {
            alarms.removeMin()
            guard let entry = pending[next.path], entry.deadline == next.deadline else { continue }
            let group = groups[entry.group] ?? Group(members: [next.path])
            // A partner still busy holds the burst; its own alarm, later, takes everyone.
            if group.members.contains(where: { (pending[$0]?.deadline ?? now) > now }) { continue }
            if let held = group.members.first(where: { isBeingWritten($0, at: now) && isHeld($0) }) {
                pending[held]?.isHeld = true
                push(held, to: pending[held]!.cap)
                continue
            }
            let unchanged = PathSet(group.members.filter { pending[$0]?.hasEvent == false })
            for member in group.members { pending[member] = nil }
            groups[entry.group] = nil
            due.append(Burst(names: group.members.sorted, origins: group.origins, unchanged: unchanged, hops: group.hops))
        }
        if pending.isEmpty { sources.removeAll() }
        return due.sorted { $0.names[0] < $1.names[0] }
    }

    /// Whether `path` was written to with no close since, its content is there (not renamed away
    /// or deleted), and its cap is still ahead: such a window may be held.
    private func isBeingWritten(_ path: String, at now: Instant) -> Bool {
        guard let entry = pending[path], entry.isWriting, entry.cap > now else { return false }
        return origin(of: path) != .vacated
    }

    /// A directory was renamed: pending names below it follow, and so do the origins naming it.
    mutating func moveDirectory(from: String, to: String) {
        func moved(_ path: String) -> String {
            KnownFiles.isSame(path, orBelow: from) ? to + path.dropFirst(from.count) : path
        }
        func moved(_ origin: Origin) -> Origin {
            if case .name(let name) = origin { return .name(moved(name)) }
            return origin
        }
        guard pending.keys.contains(where: { KnownFiles.isSame($0, orBelow: from) })
            || groups.values.contains(where: { $0.origins.values.contains { moved($0) != $0 } })
        else { return }
        // Names below `to` were gone before the move could land there (a directory is renamed
        // only over an empty one): the names moving in take their places.
        forget(below: to)
        pending = pending.map { (moved($0), $1) }
        for (id, group) in groups {
            groups[id] = Group(
                members: PathSet(group.members.map(moved)),
                origins: group.origins.map { (moved($0), moved($1)) },
                hops: group.hops.map { (moved($0), $1.map(moved)) })
        }
        alarms = Heap(alarms.unordered.map { Alarm(deadline: $0.deadline, path: moved($0.path)) })
        sources = sources.mapValues { (moved($0.path), moved($0.origin), $0.hops.map(moved)) }
    }

    /// Whether `path` is in a rename still settling: its content came by one, or left by one.
    func isInPendingRename(_ path: String) -> Bool {
        guard let entry = pending[path], let group = groups[entry.group] else { return false }
        return group.hops[path] != nil || group.hops.values.contains { $0.contains { $0.isSameName(as: path) } }
    }

    /// Pending names whose content renames brought through `source` (sorted).
    func renameDestinations(from source: String) -> [String] {
        groups.values.flatMap { group in group.hops.filter { $0.value.contains { $0.isSameName(as: source) } }.map(\.key) }.sorted()
    }

    /// Names at or below `directory` whose content a pending name came from by a rename.
    func renameSources(below directory: String) -> [String] {
        groups.values.flatMap { group in
            group.origins.values.compactMap { origin -> String? in
                guard case .name(let source) = origin, KnownFiles.isSame(source, orBelow: directory) else { return nil }
                return source
            }
        }
    }

    /// Forgets every pending name at or below `directory`, as if no event had come for them.
    mutating func forget(below directory: String) {
        for (path, entry) in pending where KnownFiles.isSame(path, orBelow: directory) {
            pending[path] = nil
            groups[entry.group]?.members.remove(path)
            groups[entry.group]?.origins[path] = nil
            groups[entry.group]?.hops[path] = nil
            if groups[entry.group]?.members.isEmpty == true { groups[entry.group] = nil }
        }
    }

    // MARK: - Windows and groups

    /// Opens a window on `path` (in a group of its own) unless one is open.
    private mutating func open(_ path: String, at now: Instant) {
        guard pending[path] == nil else { return }
        let id = nextGroup
        nextGroup += 1
        groups[id] = Group(members: [path])
        pending[path] = Pending(deadline: now, cap: now.advanced(by: maxSettle), group: id)
    }

    /// Moves `path`'s deadline on to `deadline`, within its cap.
    private mutating func push(_ path: String, to deadline: Instant) {
        guard var entry = pending[path] else { return }
        let capped = min(deadline, entry.cap)
        guard capped > entry.deadline || !entry.isQueued else { return }
        entry.deadline = max(entry.deadline, capped)
        entry.isQueued = true
        pending[path] = entry
        alarms.insert(Alarm(deadline: entry.deadline, path: path))
    }

    private func origin(of path: String) -> Origin {
        pending[path].flatMap { groups[$0.group]?.origins[path] } ?? .name(path)
    }

    private mutating func setOrigin(_ origin: Origin, of path: String) {
        guard let id = pending[path]?.group else { return }
        groups[id]?.origins[path] = origin == .name(path) ? nil : origin
    }

    /// How many names a content's hops keep, the latest: a rename storm through one chain inside
    /// a window (thousands in its second) would otherwise copy a growing list at every step, and a
    /// buffer opened on a name many renames back is what a rescan-like look at the disk is for.
    static var hopLimit: Int { 16 }

    private func hops(of path: String) -> [String] {
        pending[path].flatMap { groups[$0.group]?.hops[path] } ?? []
    }

    private mutating func setHops(_ hops: [String], of path: String) {
        guard let id = pending[path]?.group else { return }
        groups[id]?.hops[path] = hops.isEmpty ? nil : hops
    }

    /// Puts two names into one group: they settle together.
    private mutating func join(_ first: String, _ second: String) {
        guard let a = pending[first]?.group, let b = pending[second]?.group, a != b,
            let smaller = groups[b], var larger = groups[a]
        else { return }
        larger.members.formUnion(smaller.members)
        larger.origins.merge(smaller.origins) { _, new in new }
        larger.hops.merge(smaller.hops) { _, new in new }
        for member in smaller.members { pending[member]?.group = a }
        groups[a] = larger
        groups[b] = nil
    }

    /// Drops alarms whose name has a later deadline or is no longer pending.
    private mutating func dropStale() {
        while let next = alarms.min {
            if let entry = pending[next.path], entry.deadline == next.deadline { return }
            alarms.removeMin()
        }
    }
}
