/// Which versions history keeps as they age, and how large it may grow: Syncthing's staggered
/// schedule per path, then a cap on the database's bytes.
///
/// ## The schedule
///
/// For each path, with its versions from newest to oldest:
/// - the path's latest version is always kept (a tombstone too: a removed file stays restorable);
/// - every version younger than an hour is kept;
/// - from an hour to a day old, one an hour; to 30 days, one a day; to `maxAgeDays`, one a week:
///   time is cut into buckets of that length (UTC, counted from the Unix epoch) and a version is
///   kept only when no newer version of the path falls in the same bucket, so the newest of each
///   hour, day or week survives;
/// - older than `maxAgeDays`, a version is dropped;
/// - a `moved` version younger than `maxAgeDays` is kept whatever its bucket: it is the link by
///   which `autosave history NEWNAME` follows the file back to its versions under the old name.
///
/// Buckets are fixed in time, not measured from now, so a pass keeps the same versions however
/// often it runs: a version that is the newest of its hour is also the newest of its day once it
/// is the latest of that day, and never dropped by an earlier pass for being "too close" to a
/// neighbour that a later pass drops in turn.
///
/// ## The cap
///
/// While the database is larger than `maxBytes`, the oldest versions go first; each path's latest
/// version and tombstones younger than `youngTombstoneDays` go last, oldest first among them.
public struct RetentionPolicy: Sendable, Equatable {
    /// Versions older than this many days are dropped (a path's latest version excepted).
    public var maxAgeDays: Int
    /// The database's size (main file and WAL) that pruning brings it under, in bytes.
    public var maxBytes: Int64
    /// Tombstones younger than this many days are dropped only after every other version.
    public var youngTombstoneDays: Int

    /// - Parameters:
    ///   - maxAgeDays: at least 1; Syncthing's default is a year.
    ///   - maxBytes: at least 0; 1 GiB by default.
    public init(maxAgeDays: Int = 365, maxBytes: Int64 = 1 << 30, youngTombstoneDays: Int = 30) {
        self.maxAgeDays = max(1, maxAgeDays)
        self.maxBytes = max(0, maxBytes)
        self.youngTombstoneDays = max(0, youngTombstoneDays)
    }

    static let hour: Int64 = 3_600_000
    static let day: Int64 = 24 * hour
    static let week: Int64 = 7 * day

    /// One version as the schedule sees it.
    struct Entry: Sendable, Equatable {
        var id: Int64
        /// Milliseconds since the Unix epoch.
        var time: Int64
        var isMove: Bool
    }

    /// The ids of the versions of one path that the schedule drops at `now`.
    ///
    /// - Parameter versions: every version of the path, in any order; "newer" is the larger id
    ///   (the order they were recorded in, whatever the wall clock said).
    func drops(_ versions: [Entry], now: Int64) -> [Int64] {
        let newestFirst = versions.sorted { $0.id > $1.id }
        let maxAge = Int64(maxAgeDays) * Self.day
        // The buckets of every newer version, at each of the three bucket lengths.
        var hours = Set<Int64>(), days = Set<Int64>(), weeks = Set<Int64>()
        var dropped: [Int64] = []
        for (index, version) in newestFirst.enumerated() {
            defer {
                hours.insert(Self.bucket(version.time, Self.hour))
                days.insert(Self.bucket(version.time, Self.day))
                weeks.insert(Self.bucket(version.time, Self.week))
            }
            let age = now - version.time
            guard index > 0, age >= Self.hour else { continue }
            if age >= maxAge {
                dropped.append(version.id)
                continue
            }
            if version.isMove { continue }
            let isTaken: Bool
            if age < Self.day {
                isTaken = hours.contains(Self.bucket(version.time, Self.hour))
            } else if age < 30 * Self.day {
                isTaken = days.contains(Self.bucket(version.time, Self.day))
            } else {
                isTaken = weeks.contains(Self.bucket(version.time, Self.week))
            }
            if isTaken { dropped.append(version.id) }
        }
        return dropped
    }

    /// The bucket of length `length` that `time` falls in (floor division: times before 1970 too).
    static func bucket(_ time: Int64, _ length: Int64) -> Int64 {
        let quotient = time / length
        return time % length < 0 ? quotient - 1 : quotient
    }
}
