import AutosaveHistory
import AutosaveKit
import Glibc
import Testing

/// `autosave history`'s lines: local times read once per hour of the zone, not per version, and
/// each line's fields as they were printed before they were written as bytes.
@Suite struct VersionLineTests {
    /// 2026-11-27T10:00:00Z.
    let moment: Int64 = 1_795_773_600_000

    func line(_ version: Version, now: Int64, clock: LocalClock = LocalClock(zone: { _ in 0 })) -> String {
        var clock = clock
        var text = TextBytes()
        VersionLine.append(version, now: now, clock: &clock, to: &text)
        return String(decoding: text.bytes, as: UTF8.self)
    }

    func time(_ milliseconds: Int64, clock: inout LocalClock) -> String {
        var text = TextBytes()
        clock.append(milliseconds, to: &text)
        return String(decoding: text.bytes, as: UTF8.self)
    }

    @Test func aSaveWithLineCountsAndAnOutsideChangeWithItsWriter() {
        let saved = Version(id: 12, path: "src/a.txt", time: moment, who: "nvim:42", kind: .saved, size: 812, digest: 1, added: 3, removed: 1)
        #expect(line(saved, now: moment + 5 * 60_000) == "12  2026-11-27 10:00:00 (5 minutes ago)  nvim:42  saved  812 B  +3 -1  src/a.txt\n")
        let outside = Version(
            id: 13, path: "b.txt", time: moment, who: "external", kind: .modified, size: 1_000_000, program: "sed", pid: 977, digest: 2)
        #expect(line(outside, now: moment) == "13  2026-11-27 10:00:00 (just now)  external (sed 977)  modified  976.6 KiB  b.txt\n")
        let moved = Version(id: 14, path: "c.txt", time: moment, who: "external", kind: .moved, size: nil, from: "old/c.txt", program: "mv", digest: nil)
        #expect(line(moved, now: moment + 86_400_000) == "14  2026-11-27 10:00:00 (1 day ago)  external (mv)  moved from old/c.txt  -  c.txt\n")
    }

    @Test func agesTakeTheLargestWholeUnit() {
        let version = Version(id: 1, path: "a", time: moment, who: "cli", kind: .saved, size: 0, digest: 0)
        let cases: [(Int64, String)] = [
            (-5000, "just now"), (999, "just now"), (1000, "1 second ago"), (59_999, "59 seconds ago"), (60_000, "1 minute ago"),
            (7_200_000, "2 hours ago"), (3 * 86_400_000 + 1, "3 days ago"),
        ]
        for (elapsed, ago) in cases {
            #expect(line(version, now: moment + elapsed).contains("(\(ago))"), "\(elapsed) ms")
        }
    }

    @Test func sizesAsTheDecimalFormattingHadThem() {
        /// The formatting the lines had before they were bytes: Double's description, one decimal.
        func described(_ count: Int) -> String {
            if count < 1024 { return "\(count) B" }
            let kib = Double(count) / 1024
            if kib < 1024 { return "\((kib * 10).rounded() / 10) KiB" }
            return "\((kib / 1024 * 10).rounded() / 10) MiB"
        }
        var sizes = [0, 1, 1023, 1024, 1075, 1076, 1_048_524, 1_048_575, 1_048_576, 1_000_000, 5_000_000_000]
        var random = SystemRandomNumberGenerator()
        for _ in 0..<2000 { sizes.append(Int.random(in: 0..<(1 << 34), using: &random)) }
        for size in sizes {
            let version = Version(id: 1, path: "a", time: moment, who: "cli", kind: .saved, size: size, digest: 0)
            #expect(line(version, now: moment).contains("  \(described(size))  a\n"), "\(size) bytes")
        }
    }

    @Test func localTimesAreTheLibrarysInThisMachinesZone() {
        var clock = LocalClock()
        var random = SystemRandomNumberGenerator()
        // Sorted newest first, as a listing reads them, and spread over decades and whole days.
        let moments = (0..<3000).map { _ in Int64.random(in: 0..<4_102_444_800_000, using: &random) }.sorted(by: >)
        for milliseconds in moments + [0, 999, 86_399_999, moment] {
            var seconds = time_t(milliseconds / 1000)
            var parts = tm()
            localtime_r(&seconds, &parts)
            func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
            let expected = "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday)) \(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec))"
            #expect(time(milliseconds, clock: &clock) == expected, "\(milliseconds) ms")
        }
    }

    @Test func anHourWithAChangeOfOffsetIsReadMomentByMoment() {
        // A zone one hour east of UTC that moves to two hours east at 01:30:00 UTC of the day of
        // `moment`, half way through an hour: its moments on both sides, in both orders.
        let change = (moment / 1000 / 86_400) * 86_400 + 5400
        var clock = LocalClock(zone: { $0 < change ? 3600 : 7200 })
        let before = (change - 1) * 1000
        let after = change * 1000
        #expect(time(after + 3_600_000, clock: &clock) == "2026-11-27 04:30:00")
        #expect(time(after, clock: &clock) == "2026-11-27 03:30:00")
        #expect(time(before, clock: &clock) == "2026-11-27 02:29:59")
        #expect(time(before - 3_600_000, clock: &clock) == "2026-11-27 01:29:59")
        #expect(time(before, clock: &clock) == "2026-11-27 02:29:59")
        #expect(time(after, clock: &clock) == "2026-11-27 03:30:00")
    }

    @Test func datesBeforeTheEpochAndFarAhead() {
        var clock = LocalClock(zone: { _ in 0 })
        #expect(time(-1, clock: &clock) == "1969-12-31 23:59:59")
        #expect(time(951_782_400_000, clock: &clock) == "2000-02-29 00:00:00")
        #expect(time(4_107_542_400_000, clock: &clock) == "2100-03-01 00:00:00")
    }

    @Test func theLocalTimeOfOneMomentIsTheListingsToo() {
        var clock = LocalClock()
        #expect(VersionLine.localTime(moment) == time(moment, clock: &clock))
    }
}
