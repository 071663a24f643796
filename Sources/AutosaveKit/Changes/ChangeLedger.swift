import ByteNames

/// Which paths changed when, in one agent run: what `changes` and git's fsmonitor hook answer
/// "what changed since this clock?" from.
///
/// One entry per path, holding its latest change only, so memory grows with the number of
/// paths changed, not with the number of changes; past `capacity` paths the oldest are
/// forgotten, and clocks from before them are answered `fresh`. Whatever makes the record
/// incomplete (events lost to an overflow, a rescan, directories the kernel would not watch)
/// is marked, and every clock from before it is answered `fresh` too: a client is told to look
/// for itself, never handed a list that is silently short.
struct ChangeLedger {
    private struct Entry {
        var sequence: UInt64
        var kind: FileChange.Kind
        var from: String?
        var isIgnored: Bool
    }

    /// This run's name in every clock it hands out.
    let instance: String
    /// How many changes (and losses) have been recorded: the clock's sequence now.
    private(set) var sequence: UInt64 = 0
    /// Clocks below this cannot be answered exactly.
    private(set) var lostThrough: UInt64 = 0
    /// Some directories are not watched (the watch limit, a path too long): changes there reach
    /// the record late or never, so every answer is `fresh` while this holds.
    var isPartial = false
    /// Paths kept at most.
    let capacity: Int
    private var latest: [PathKey: Entry] = [:]
    /// Every recording in order; an element whose path has changed again since is stale and
    /// skipped, and dropped when stale ones outnumber the live.
    private var order: [(sequence: UInt64, path: PathKey)] = []

    init(instance: String = ChangeClock.newInstance(), capacity: Int = 100_000) {
        self.instance = instance
        self.capacity = capacity
    }

    /// The clock as of now.
    var clock: ChangeClock { ChangeClock(instance: instance, sequence: sequence) }

    /// How many paths are held.
    var count: Int { latest.count }

    /// Records the latest change of `path` (a folder's ends in `/`).
    mutating func record(_ path: String, _ kind: FileChange.Kind, from: String? = nil, isIgnored: Bool = false) {
        sequence += 1
        let key = PathKey(path)
        latest[key] = Entry(sequence: sequence, kind: kind, from: from, isIgnored: isIgnored)
        order.append((sequence, key))
        if latest.count > capacity {
            forgetOldest()
        } else if order.count > 2 * latest.count + 1024 {
            compact()
        }
    }

    /// Changes may have happened that were not recorded: every clock handed out before now is
    /// answered `fresh`.
    mutating func markLost() {
        sequence += 1
        lostThrough = sequence
    }

    /// The paths changed after `since`, each with its latest change, in order, those `include`
    /// keeps; `fresh` (and no paths) when that cannot be answered exactly.
    func changes(since: ChangeClock?, include: (ChangedPath) -> Bool = { _ in true }) -> ChangesSince {
        guard let since, since.instance == instance, since.sequence >= lostThrough, since.sequence <= sequence,
            !isPartial
        else { return ChangesSince(clock: clock, changes: [], isFresh: true) }
        var start = order.partitioningIndex { $0.sequence > since.sequence }
        var found: [ChangedPath] = []
        while start < order.count {
            let (number, key) = order[start]
            start += 1
            guard let entry = latest[key], entry.sequence == number else { continue }
            let change = ChangedPath(path: key.text, kind: entry.kind, from: entry.from, isIgnored: entry.isIgnored)
            if include(change) { found.append(change) }
        }
        return ChangesSince(clock: clock, changes: found, isFresh: false)
    }

    private mutating func compact() {
        order.removeAll { latest[$0.path]?.sequence != $0.sequence }
    }

    /// Drops the older half of the paths; clocks from before the newest dropped are `fresh`.
    private mutating func forgetOldest() {
        compact()
        let dropping = order.count - capacity / 2
        guard dropping > 0 else { return }
        for (_, key) in order[..<dropping] { latest[key] = nil }
        lostThrough = max(lostThrough, order[dropping - 1].sequence)
        order.removeFirst(dropping)
    }
}

extension Array {
    /// The index of the first element `belongs` is true of, in an array where it is false of a
    /// prefix and true of the rest.
    fileprivate func partitioningIndex(where belongs: (Element) -> Bool) -> Int {
        var low = 0
        var high = count
        while low < high {
            let middle = (low + high) / 2
            if belongs(self[middle]) { high = middle } else { low = middle + 1 }
        }
        return low
    }
}
