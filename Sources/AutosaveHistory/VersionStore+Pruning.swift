/// One pruning pass, carried out a bounded step at a time by `VersionStore.advance(_:)`: the
/// schedule path by path, then the cap, then giving the space back.
///
/// Each step is one short transaction (a few thousand versions read, a few hundred dropped), so
/// whoever owns the store can record between steps: pruning never holds the writer for long. The
/// pass holds no rows between steps, only where it got to, so versions recorded meanwhile are
/// simply newer than the pass's `now`, and kept.
public struct PrunePass: Sendable {
    public let policy: RetentionPolicy
    /// Milliseconds since the Unix epoch: the instant ages are measured from.
    public let now: Int64
    /// What the pass did so far.
    public internal(set) var report = PruneReport()
    var stage = Stage.start

    enum Stage: Sendable {
        case start
        /// The schedule, for the paths after `after` (in byte order), once the versions it
        /// already chose (`pending`) are dropped.
        case schedule(after: String, pending: [Int64])
        /// The cap, with its victims in the order they go (nil: not listed yet), from `next` on.
        case cap(victims: [Victim]?, next: Int)
        case reclaim
        case checkpoint
        case done
    }

    /// A version the cap may drop, and the bytes of its content's frame (an estimate of what
    /// dropping it gives back: nothing when the content is shared).
    struct Victim: Sendable {
        var id: Int64
        var frameBytes: Int64
    }

    /// A pass that has done nothing yet; `VersionStore.advance(_:)` carries it out.
    public init(policy: RetentionPolicy, now: Int64) {
        self.policy = policy
        self.now = now
    }

    /// Whether the pass is over (`advance` does nothing more).
    public var isFinished: Bool {
        if case .done = stage { return true }
        return false
    }
}

extension VersionStore {
    /// Versions the schedule reads in one step (more when one path alone has more).
    static let scheduleRowsPerStep = 4096
    /// Versions the schedule or the cap drops in one step at most.
    static let droppedPerStep = 256
    /// Pages `incremental_vacuum` gives back in one step (16 MiB of 4 KiB pages).
    static let reclaimPagesPerStep = 4096

    /// Runs a whole pruning pass: the schedule, then the cap, then gives the space back (the
    /// file shrinks, the WAL is truncated). Every remaining version reads back as it was recorded.
    ///
    /// - Returns: what was dropped, and the sizes before and after.
    /// - Throws: `HistoryError.sqlite` when the database cannot be written (the steps done so far
    ///   stay done: each is a transaction of its own); `.compression` when zstd fails;
    ///   `.corrupt` when the database turns out damaged.
    public func prune(policy: RetentionPolicy, now: Int64) throws(HistoryError) -> PruneReport {
        var pass = PrunePass(policy: policy, now: now)
        while !pass.isFinished { try advance(&pass) }
        return pass.report
    }

    /// Runs the next step of `pass`: one transaction of the schedule or of the cap, one round of
    /// giving pages back, or the final checkpoint.
    ///
    /// - Throws: as `prune(policy:now:)`; the step is rolled back, and `pass` is as it was.
    public func advance(_ pass: inout PrunePass) throws(HistoryError) {
        switch pass.stage {
        case .start:
            pass.report.bytesBefore = bytesOnDisk
            pass.stage = .schedule(after: "", pending: [])
        case .schedule(var after, var pending):
            let dropped = try transaction(.immediate) { () throws(HistoryError) -> Dropped? in
                if pending.isEmpty {
                    guard let (last, chosen) = try scheduleStep(after: after, policy: pass.policy, now: pass.now) else { return nil }
                    after = last
                    pending = chosen
                }
                // At most so many per transaction (each may mean compressing a survivor again):
                // the rest next step. Dropping part of what the schedule chose first leaves the
                // rest as it was: a version dropped for a newer one in its hour, day or week still
                // has one there, the newest of that bucket, which is kept.
                let chunk = Array(pending.prefix(Self.droppedPerStep))
                pending.removeFirst(chunk.count)
                return try drop(versions: chunk, isStrict: false)
            }
            guard let dropped else {
                pass.stage = .cap(victims: nil, next: 0)
                return
            }
            pass.report.versions += dropped.versions
            pass.report.contents += dropped.contents
            pass.report.reencoded += dropped.reencoded
            pass.stage = .schedule(after: after, pending: pending)
        case .cap(let victims, let next):
            guard try liveBytes() > pass.policy.maxBytes else {
                pass.stage = .reclaim
                return
            }
            guard let victims else {
                pass.stage = .cap(victims: try capVictims(policy: pass.policy, now: pass.now), next: 0)
                return
            }
            guard next < victims.count else {
                pass.stage = .reclaim
                return
            }
            let end = try transaction(.immediate) { () throws(HistoryError) -> Int in
                let excess = try liveBytes() - pass.policy.maxBytes
                var end = next
                var estimate: Int64 = 0
                while end < victims.count, end - next < Self.droppedPerStep, estimate < excess {
                    estimate += victims[end].frameBytes
                    end += 1
                }
                let dropped = try drop(versions: victims[next..<end].map(\.id), isStrict: false)
                pass.report.versions += dropped.versions
                pass.report.versionsOverCap += dropped.versions
                pass.report.contents += dropped.contents
                pass.report.reencoded += dropped.reencoded
                return end
            }
            pass.stage = .cap(victims: victims, next: end)
        case .reclaim:
            if try !releaseFreePages(atMost: Self.reclaimPagesPerStep) { pass.stage = .checkpoint }
        case .checkpoint:
            try checkpointAndTruncate()
            pass.report.bytesAfter = bytesOnDisk
            pass.stage = .done
        case .done:
            return
        }
    }

    // MARK: - Steps

    /// Applies the schedule to the paths after `after`, about `scheduleRowsPerStep` versions' worth.
    ///
    /// - Returns: the last path looked at and the versions the schedule drops there; nil when no
    ///   path was left.
    private func scheduleStep(
        after: String, policy: RetentionPolicy, now: Int64
    ) throws(HistoryError) -> (last: String, drops: [Int64])? {
        typealias Row = (path: String, entry: RetentionPolicy.Entry, isCopy: Bool)
        func row(_ row: SQLiteStatement) -> Row {
            (
                row.text(at: 0), RetentionPolicy.Entry(id: row.int64(at: 1), time: row.int64(at: 2), isMove: row.int64(at: 3) != 0),
                row.int64(at: 4) == 0
            )
        }
        let columns = "path, id, time, kind = '\(VersionKind.moved.rawValue)', \(Self.isOnDisk)"
        var batch = try rows(
            "SELECT \(columns) FROM versions WHERE path > ? ORDER BY path, id LIMIT ?",
            [.text(after), .integer(Int64(Self.scheduleRowsPerStep))], row)
        guard let first = batch.first, let last = batch.last else { return nil }
        if batch.count == Self.scheduleRowsPerStep {
            if Self.isSamePath(last.path, first.path) {
                // One path with more versions than a step reads: all of them, as its schedule needs.
                batch = try rows("SELECT \(columns) FROM versions WHERE path = ? ORDER BY id", [.text(first.path)], row)
            } else {
                // The last path may go on past the limit: it is the next step's.
                batch.removeAll { Self.isSamePath($0.path, last.path) }
            }
        }
        var drops: [Int64] = []
        var start = batch.startIndex
        while start < batch.endIndex {
            let path = batch[start].path
            let end = batch[start...].firstIndex { !Self.isSamePath($0.path, path) } ?? batch.endIndex
            // Conflict copies are a schedule of their own: a copy newer than the file's latest
            // version, in the same hour, must not be the one the file's schedule keeps.
            let versions = batch[start..<end]
            drops += policy.drops(versions.filter { !$0.isCopy }.map(\.entry), now: now)
            drops += policy.drops(versions.filter(\.isCopy).map(\.entry), now: now)
            start = end
        }
        return (batch.last?.path ?? last.path, drops)
    }

    /// Whether two paths are the same name: the same bytes, as SQLite compares them. Swift's
    /// `==` on strings would take NFC `café` and NFD `cafe\u{301}`, two files, for one path, and
    /// the schedule would then keep one latest version for both.
    static func isSamePath(_ one: String, _ other: String) -> Bool {
        one.utf8.elementsEqual(other.utf8)
    }

    /// Every version in the order the cap drops them: first those that are neither their path's
    /// latest (a conflict copy never is) nor a young tombstone, then those, each group oldest first.
    private func capVictims(policy: RetentionPolicy, now: Int64) throws(HistoryError) -> [PrunePass.Victim] {
        let youngSince = now - Int64(policy.youngTombstoneDays) * RetentionPolicy.day
        return try rows(
            """
            SELECT v.id, coalesce(length(c.data), 0),
                v.id = (SELECT max(w.id) FROM versions AS w WHERE w.path = v.path AND w.\(Self.isOnDisk))
                    OR (v.kind = ? AND v.time > ?) AS isLast
            FROM versions AS v LEFT JOIN contents AS c ON c.id = v.content
            ORDER BY isLast, v.time, v.id
            """,
            [.text(VersionKind.removed.rawValue), .integer(youngSince)]
        ) { (row: SQLiteStatement) throws(HistoryError) in PrunePass.Victim(id: row.int64(at: 0), frameBytes: row.int64(at: 1)) }
    }
}
