import AutosaveTestKit
import Foundation
import Testing

@testable import AutosaveHistory

/// Retention: the staggered schedule keeps exactly the versions it should (against a model that
/// spells the schedule out the slow way), every remaining version still reads back byte for byte
/// after the contents its chain went through are deleted, and the byte cap brings the file under
/// it with each path's latest version kept.
@Suite struct VersionStorePruningTests {
    static let hour: Int64 = 3_600_000
    static let day = 24 * hour
    /// The pruning's `now`: a fixed instant, so that buckets fall the same way every run.
    static let now: Int64 = 1_800_000_000_000

    /// The schedule written out from its definition: a version is kept when it is its path's
    /// latest, younger than an hour, a move within the maximum age, or no newer version of its
    /// path shares its hour, day or week (by its age), floor-divided from the epoch. A path's
    /// conflict copies are a schedule of their own, so a copy is never the file's latest.
    static func modelKeeps(_ versions: [Version], now: Int64, maxAgeDays: Int) -> Set<Int64> {
        var kept = Set<Int64>()
        for path in Set(versions.map(\.path)) {
            for isCopy in [false, true] {
                let own = versions.filter { $0.path == path && ($0.kind == .conflictCopy) == isCopy }
                kept.formUnion(scheduleKeeps(own, now: now, maxAgeDays: maxAgeDays))
            }
        }
        return kept
    }

    /// `modelKeeps` for the versions of one schedule: one path's, copies or not.
    static func scheduleKeeps(_ own: [Version], now: Int64, maxAgeDays: Int) -> Set<Int64> {
        var kept = Set<Int64>()
        let latest = own.map(\.id).max()
        for version in own {
            let age = now - version.time
            if version.id == latest || age < hour {
                kept.insert(version.id)
                continue
            }
            if age >= Int64(maxAgeDays) * day { continue }
            if version.kind == .moved {
                kept.insert(version.id)
                continue
            }
            let length = Double(age < day ? hour : age < 30 * day ? day : 7 * day)
            let bucket = { (time: Int64) in (Double(time) / length).rounded(.down) }
            if !own.contains(where: { $0.id > version.id && bucket($0.time) == bucket(version.time) }) {
                kept.insert(version.id)
            }
        }
        return kept
    }

    /// Records random versions of a few paths, spread from minutes to more than a year before
    /// `now`; returns every version recorded and its bytes.
    static func recordRandomHistory(
        _ store: VersionStore, _ random: inout SplitMix64, count: Int
    ) throws -> [Int64: [UInt8]?] {
        let paths = ["a", "b", "d/c", "d/e"]
        let scales: [Int64] = [60_000, hour, day, 7 * day, 60 * day]
        var ages = (0..<count).map { _ in
            let scale = scales[random.below(scales.count)]
            return Int64(random.below(Int(scale * 8 / 1000))) * 1000
        }
        // Mostly recorded oldest first, as a clock would have it; a few out of order.
        ages.sort(by: >)
        for _ in 0..<(count / 10) { ages.swapAt(random.below(count), random.below(count)) }
        var recorded: [Int64: [UInt8]?] = [:]
        var contents: [String: [UInt8]] = [:]
        for age in ages {
            let path = paths[random.below(paths.count)]
            var version = VersionInput(path: path, content: nil, kind: .saved, who: "cli", time: now - age)
            switch random.below(10) {
            case 0:
                version.kind = .removed
            case 2 where contents[path] != nil:
                version.kind = .conflictCopy
                version.from = path + ".copy"
                version.content = (contents[path] ?? []) + line(random.below(1000), &random)
            case 1:
                let from = paths[random.below(paths.count)]
                version.kind = .moved
                version.from = from
                version.content = contents[from]
            default:
                var lines = contents[path] ?? text(lines: 40, seed: random.next())
                lines.replaceSubrange(0..<min(lines.count, 64), with: line(random.below(1000), &random))
                version.content = lines
            }
            guard let made = try store.record(version) else { continue }
            if let bytes = version.content, version.kind != .conflictCopy { contents[path] = bytes }
            recorded[made.id] = try store.content(of: made.id)
        }
        return recorded
    }

    @Test func theScheduleKeepsExactlyTheModelsVersionsAndEveryOneReadsBack() throws {
        let cases = ProcessInfo.processInfo.environment["AUTOSAVE_PROPERTY_CASES"].flatMap(Int.init) ?? 12
        for index in 0..<cases {
            var random = SplitMix64(seed: 0x7072_756E &+ UInt64(index))
            let interval = [2, 3, 5, 64][random.below(4)]
            let maxAgeDays = [30, 365][random.below(2)]
            let label = "case \(index) (interval \(interval), maxAgeDays \(maxAgeDays))"
            let fixture = try HistoryFixture()
            let store = try fixture.open(keyframeInterval: interval)
            let recorded = try Self.recordRandomHistory(store, &random, count: 150 + random.below(150))
            let before = try store.versions(below: "")
            let policy = RetentionPolicy(maxAgeDays: maxAgeDays)
            let report = try store.prune(policy: policy, now: Self.now)

            let expected = Self.modelKeeps(before, now: Self.now, maxAgeDays: maxAgeDays)
            let remaining = try store.versions(below: "")
            #expect(Set(remaining.map(\.id)) == expected, "\(label): the versions kept")
            #expect(report.versions == before.count - remaining.count, "\(label): the report counts what went")
            #expect(report.versions > 0, "\(label): the history was old enough that some went")
            for version in remaining {
                #expect(try store.content(of: version.id) == recorded[version.id] ?? nil, "\(label): version \(version.id) reads back")
            }
            try Self.expectChainsSound(fixture, interval: interval, label: label)
            #expect(try fixture.integer("SELECT count(*) FROM contents WHERE id NOT IN (SELECT content FROM versions WHERE content IS NOT NULL)") == 0,
                    "\(label): no content is left that no version holds")

            // Later, pruned again: the model applied to what is left, and nothing else changes.
            let later = Self.now + 40 * Self.day
            _ = try store.prune(policy: policy, now: later)
            #expect(Set(try store.versions(below: "").map(\.id)) == Self.modelKeeps(remaining, now: later, maxAgeDays: maxAgeDays), "\(label)")
            #expect(try store.prune(policy: policy, now: later).versions == 0, "\(label): a second pass at the same time drops nothing")
        }
    }

    /// Every content's depth is its base's plus one (a keyframe's 0), its base is older, and no
    /// chain reaches the keyframe interval.
    static func expectChainsSound(_ fixture: HistoryFixture, interval: Int, label: String) throws {
        #expect(try fixture.integer("SELECT count(*) FROM contents AS c WHERE c.base IS NULL AND c.depth != 0") == 0, "\(label): keyframes at depth 0")
        #expect(
            try fixture.integer(
                "SELECT count(*) FROM contents AS c JOIN contents AS b ON b.id = c.base WHERE c.depth != b.depth + 1 OR b.id >= c.id") == 0,
            "\(label): each depth one more than its base's, each base older")
        #expect(try fixture.integer("SELECT count(*) FROM contents WHERE depth >= \(max(1, interval))") == 0, "\(label): chains shorter than \(interval)")
    }

    @Test func deletingTheContentsAChainWentThroughLeavesEverySurvivorReadingBack() throws {
        let fixture = try HistoryFixture()
        let store = try fixture.open(keyframeInterval: 64)
        var random = SplitMix64(seed: 11)
        var bytes = text(lines: 2000, seed: 5)
        var recorded: [Int64: [UInt8]] = [:]
        // One version a day for 60 days, then six an hour apart in the last day: a chain of 66
        // deltas (the interval makes it branch half way up), most of whose links the schedule drops.
        let daily: [Int64] = (0..<60).map { Self.now - Int64(70 - $0) * Self.day }
        let hourly: [Int64] = (0..<6).map { Self.now - Int64(6 - $0) * Self.hour - 1 }
        let times = daily + hourly
        for time in times {
            let at = random.below(1900) * 64
            bytes.replaceSubrange(at..<at + 64, with: line(random.below(9999), &random))
            let made = try #require(try store.record(VersionInput(path: "big.txt", content: bytes, kind: .saved, who: "cli", time: time)))
            recorded[made.id] = bytes
        }
        let report = try store.prune(policy: RetentionPolicy(), now: Self.now)
        #expect(report.reencoded > 0, "survivors were compressed against contents that went")
        #expect(report.contents == report.versions, "each version dropped had a content of its own")
        let remaining = try store.versions(of: "big.txt")
        #expect(remaining.count < times.count)
        for version in remaining {
            #expect(try store.content(of: version.id) == recorded[version.id], "version \(version.id) byte for byte")
        }
        // From a cold cache too: the bytes come from the frames, not from memory.
        store.close()
        let reopened = try fixture.open()
        for version in remaining {
            #expect(try reopened.content(of: version.id) == recorded[version.id], "version \(version.id) after reopening")
        }
        try Self.expectChainsSound(fixture, interval: 64, label: "big.txt")
    }

    @Test func theCapBringsTheFileUnderItOldestFirstAndKeepsEveryLatestVersion() throws {
        let fixture = try HistoryFixture()
        let store = try fixture.open()
        var recorded: [Int64: [UInt8]] = [:]
        func record(_ path: String, _ bytes: [UInt8]?, _ kind: VersionKind, at time: Int64) throws -> Version {
            let made = try #require(try store.record(VersionInput(path: path, content: bytes, kind: kind, who: "cli", time: time)))
            recorded[made.id] = try store.content(of: made.id)
            return made
        }
        // A young tombstone that is no longer its path's latest, older than every other version:
        // the version before it goes first, the tombstone after every ordinary version.
        let recreated = try record("g", randomBytes(8192, seed: 1), .saved, at: Self.now - 5 * Self.day)
        let tombstone = try record("g", nil, .removed, at: Self.now - 4 * Self.day)
        _ = try record("g", randomBytes(8192, seed: 2), .created, at: Self.now - 3 * Self.day)
        // Incompressible contents, each version of a path in an hour of its own: the schedule
        // keeps them all, and only the cap can make room.
        var time = Self.now - 20 * Self.hour
        for round in 0..<12 {
            for index in 0..<8 {
                time += 60_000
                _ = try record("f\(index)", randomBytes(8192, seed: UInt64(round * 100 + index)), .saved, at: time)
            }
            time += Self.hour
        }
        let before = try store.versions(below: "")
        let latestIDs = Set(Set(before.map(\.path)).compactMap { path in before.first { $0.path == path }?.id })
        let cap: Int64 = 300 << 10
        try store.checkpointAndTruncate()
        #expect(store.bytesOnDisk > 2 * cap, "the store starts well over the cap (\(store.bytesOnDisk) bytes)")

        let report = try store.prune(policy: RetentionPolicy(maxBytes: cap), now: Self.now)
        #expect(store.bytesOnDisk <= cap, "history.sqlite and its WAL together: \(store.bytesOnDisk) bytes")
        let files = try readFile(fixture.path).count + ((try? readFile(fixture.path + "-wal"))?.count ?? 0)
        #expect(files <= Int(cap), "the files themselves: \(files) bytes")
        #expect(report.bytesAfter == store.bytesOnDisk && report.bytesBefore > report.bytesAfter)
        #expect(report.versionsOverCap == report.versions && report.versions > 0, "the schedule alone dropped nothing")
        let remaining = try store.versions(below: "")
        for id in latestIDs { #expect(remaining.contains { $0.id == id }, "version \(id), its path's latest, stays") }
        #expect(remaining.contains { $0.id == tombstone.id }, "the young tombstone stays while ordinary versions go")
        #expect(!remaining.contains { $0.id == recreated.id }, "the oldest ordinary version went first")
        let dropped = before.filter { version in !remaining.contains { $0.id == version.id } }
        let keptOrdinary = remaining.filter { !latestIDs.contains($0.id) && $0.id != tombstone.id }
        #expect(!keptOrdinary.isEmpty, "the cap stopped once under it, with ordinary versions left")
        if let newestDropped = dropped.map(\.time).max(), let oldestKept = keptOrdinary.map(\.time).min() {
            #expect(newestDropped <= oldestKept, "the oldest went first")
        }
        for version in remaining {
            #expect(try store.content(of: version.id) == recorded[version.id], "version \(version.id) reads back")
        }
    }

    @Test func namesThatAreOneToSwiftButTwoToLinuxKeepTheirOwnLatestVersions() throws {
        let fixture = try HistoryFixture()
        let store = try fixture.open()
        let decomposed = "cafe\u{301}.txt", composed = "caf\u{E9}.txt"
        #expect(decomposed == composed, "Swift's == takes them for one name")
        let time = Self.now - 2 * Self.hour
        try store.record(input(decomposed, "nfd 1\n", time: time))
        let nfd = try #require(try store.record(input(decomposed, "nfd 2\n", time: time + 1)))
        try store.record(input(composed, "nfc 1\n", time: time + 2))
        let nfc = try #require(try store.record(input(composed, "nfc 2\n", time: time + 3)))
        let report = try store.prune(policy: RetentionPolicy(), now: Self.now)
        #expect(report.versions == 2)
        #expect(try store.versions(below: "").map(\.id) == [nfc.id, nfd.id], "each file keeps its latest version")
    }

    @Test func aDatabaseMadeWithoutIncrementalVacuumIsRebuiltWithItOnce() throws {
        let fixture = try HistoryFixture()
        let store = try fixture.open()
        try store.record(input("a", "one\n", time: Self.now - 3 * Self.day))
        try store.record(input("a", "two\n", time: Self.now - 3 * Self.day + 1))
        // As an older autosave, or another tool, might have left it.
        try store.execute("PRAGMA auto_vacuum = NONE")
        try store.execute("VACUUM")
        #expect(try fixture.integer("PRAGMA auto_vacuum") == 0)
        let report = try store.prune(policy: RetentionPolicy(), now: Self.now)
        #expect(report.versions == 1)
        #expect(try fixture.integer("PRAGMA auto_vacuum") == 2, "incremental from now on")
        #expect(try store.content(of: try #require(try store.latest(of: "a")).id) == Array("two\n".utf8))
    }

    @Test func manyDropsAreSpreadOverShortTransactions() throws {
        let fixture = try HistoryFixture()
        let store = try fixture.open(keyframeInterval: 8)
        let count = 2 * VersionStore.droppedPerStep + 100
        var last: Version?
        for index in 0..<count {
            last = try store.record(input("busy.txt", "version \(index)\n", time: Self.now - 2 * Self.hour + Int64(index)))
        }
        var pass = PrunePass(policy: RetentionPolicy(), now: Self.now)
        var steps: [Int] = []
        while !pass.isFinished {
            let before = pass.report.versions
            try store.advance(&pass)
            steps.append(pass.report.versions - before)
        }
        #expect(pass.report.versions == count - 1, "all of that hour but the newest")
        #expect(steps.allSatisfy { $0 <= VersionStore.droppedPerStep } && steps.filter { $0 > 0 }.count == 3, "\(steps)")
        #expect(try store.versions(of: "busy.txt").map(\.id) == [try #require(last).id])
        #expect(try store.content(of: try #require(last).id) == Array("version \(count - 1)\n".utf8))
    }

    @Test func recordingGoesOnBetweenThePassesSteps() throws {
        let fixture = try HistoryFixture()
        let store = try fixture.open()
        for index in 0..<40 {
            try store.record(input("p\(index % 4)", "version \(index)\n", time: Self.now - 5 * Self.day + Int64(index)))
        }
        var pass = PrunePass(policy: RetentionPolicy(), now: Self.now)
        var steps = 0
        var fresh: [Int64] = []
        while !pass.isFinished {
            try store.advance(&pass)
            steps += 1
            // Another owner's recording, between two transactions of the pass.
            if let made = try store.record(input("p\(steps % 4)", "fresh \(steps)\n", time: Self.now + Int64(steps))) { fresh.append(made.id) }
        }
        #expect(steps >= 4, "start, schedule, cap, reclaim and checkpoint are steps of their own")
        #expect(pass.report.versions == 36, "all but each path's latest of the old versions")
        for id in fresh { #expect(try store.version(id) != nil, "a version recorded during the pass stays") }
    }
}
