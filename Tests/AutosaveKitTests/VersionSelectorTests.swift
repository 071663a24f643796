import AutosaveKit
import Glibc
import Testing

/// `PATH@V` as users type it: ids, `-N`, times ago and dates, each becoming an exact moment on
/// the client; anything else a clear error that names the text.
@Suite struct VersionSelectorTests {
    /// 2026-11-27T10:00:00Z, a clock a time ago counts back from.
    let now: Int64 = 1_795_773_600_000

    func parsed(_ text: String) throws -> VersionSelector { try VersionSelector.parse(text, now: now) }

    /// Milliseconds of a local date and time, as the C library makes them (whatever zone this runs in).
    func local(
        _ year: Int32, _ month: Int32, _ day: Int32, _ hour: Int32 = 0, _ minute: Int32 = 0, _ second: Int32 = 0
    ) -> Int64 {
        var parts = tm()
        (parts.tm_year, parts.tm_mon, parts.tm_mday) = (year - 1900, month - 1, day)
        (parts.tm_hour, parts.tm_min, parts.tm_sec, parts.tm_isdst) = (hour, minute, second, -1)
        return Int64(mktime(&parts)) * 1000
    }

    @Test func idsAndStepsBackAreAsBefore() throws {
        #expect(try parsed("12") == .id(12))
        #expect(try parsed("-1") == .back(1))
        #expect(try parsed("-0") == .back(0))
    }

    @Test func timesAgoCountBackFromNowInEveryUnitAndSpelling() throws {
        let minute: Int64 = 60_000
        #expect(try parsed("10 minutes ago") == .time(now - 10 * minute))
        #expect(try parsed("10m") == .time(now - 10 * minute))
        #expect(try parsed("10 m ago") == .time(now - 10 * minute))
        #expect(try parsed("1 minute ago") == .time(now - minute))
        #expect(try parsed("30s") == .time(now - 30_000))
        #expect(try parsed("30 seconds") == .time(now - 30_000))
        #expect(try parsed("2h") == .time(now - 120 * minute))
        #expect(try parsed("1 hour ago") == .time(now - 60 * minute))
        #expect(try parsed("3d") == .time(now - 3 * 1440 * minute))
        #expect(try parsed("1 day ago") == .time(now - 1440 * minute))
        #expect(try parsed("2 weeks ago") == .time(now - 2 * 7 * 1440 * minute))
        #expect(try parsed("1w") == .time(now - 7 * 1440 * minute))
        #expect(try parsed("  5 Minutes Ago ") == .time(now - 5 * minute), "case and spaces around do not matter")
    }

    @Test func datesAndTimesAreLocalUnlessTheyCarryAZone() throws {
        #expect(try parsed("2026-11-27") == .time(local(2026, 11, 27)), "a date is its local midnight")
        #expect(try parsed("2026-11-27T10:00") == .time(local(2026, 11, 27, 10)))
        #expect(try parsed("2026-11-27T10:00:05") == .time(local(2026, 11, 27, 10, 0, 5)))
        #expect(
            try parsed("2026-11-27 10:00:05") == .time(local(2026, 11, 27, 10, 0, 5)), "as `autosave history` prints it"
        )
        #expect(try parsed("2026-11-27T10:00:05.25") == .time(local(2026, 11, 27, 10, 0, 5) + 250))
        #expect(try parsed("2026-11-27T10:00:00Z") == .time(now))
        #expect(try parsed("2026-11-27T10:00:00.123Z") == .time(now + 123))
        #expect(try parsed("2026-11-27T11:30:00+01:30") == .time(now))
        #expect(try parsed("2026-11-27T05:00:00-05:00") == .time(now))
        #expect(try parsed("2024-02-29") == .time(local(2024, 2, 29)), "a leap day")
    }

    @Test func aMomentPrintedForAUserReadsBackAsTheSameMoment() throws {
        for moment in [now, now + 7, now - 86_400_000 * 200 + 999] {
            let text = VersionSelector.localTimestamp(moment)
            #expect(try parsed(text) == .time(moment), "\(text)")
        }
    }

    @Test func garbageIsAnErrorThatNamesTheText() {
        for text in [
            "yesterday", "10 parsecs ago", "2026-13-01", "2026-02-30", "2026-11-27T25:00", "2026-11-27T10",
            "2026-11-27T10:00+5", "", "12abc", "-x",
        ] {
            #expect {
                try VersionSelector.parse(text, now: now)
            } throws: { error in
                let description = (error as? VersionSelectorError)?.description ?? ""
                return description.contains("`\(text)` is not a version") && description.contains("10 minutes ago")
            }
        }
        let unit = try? VersionSelector.parse("10 parsecs ago", now: now)
        #expect(unit == nil)
        do {
            _ = try VersionSelector.parse("10 parsecs ago", now: now)
        } catch {
            #expect(error.description.contains("\"parsecs\" is not a unit of time"), "\(error)")
        }
    }
}
