import Glibc

/// Why the `V` of a `PATH@V` names no version.
public struct VersionSelectorError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What was typed after the `@`.
    public var text: String
    /// What is wrong with it, when more is known than that it is no selector at all.
    public var problem: String?

    public init(text: String, problem: String?) {
        self.text = text
        self.problem = problem
    }

    public var description: String {
        "`\(text)` is not a version: "
            + (problem.map { $0 + "; a version is " } ?? "expected ")
            + "an id (12), -N (N versions before the latest), a time ago (\"10 minutes ago\", 2h, 3d), "
            + "or a local date and time (2026-11-27, 2026-11-27T10:00, 2026-11-27T10:00:00, or RFC 3339 with Z or an offset)"
    }
}

extension VersionSelector {
    /// Reads `V` of `PATH@V` as a user types it: a version id, `-N`, a time ago, or a date and time.
    ///
    /// A time ago is a whole number and a unit — seconds, minutes, hours, days or weeks, singular
    /// or plural, or `s`, `m`, `h`, `d`, `w` — with `ago` or without (`10 minutes ago`, `10m`).
    /// A date and time is local (`2026-11-27` is local midnight, `2026-11-27T10:00`,
    /// `2026-11-27 10:00:00` as `autosave history` prints it, seconds may have a fraction) unless it
    /// ends in `Z` or an offset (`+01:00`), as RFC 3339 does. Either becomes an absolute `.time`
    /// here, on the client, so the agent gets the moment the user meant, not a text it reads later.
    /// - Parameters:
    ///   - now: milliseconds since the Unix epoch that a time ago counts back from.
    /// - Throws: `VersionSelectorError` naming the text, and what is wrong with it when it can tell.
    public static func parse(_ text: some StringProtocol, now: Int64) throws(VersionSelectorError) -> VersionSelector {
        if let selector = VersionSelector(text) { return selector }
        let typed = String(text)
        let trimmed = typed.trimmingWhitespace()
        // `now` is not negative and `ago` not more than Int64.max: the difference fits.
        if let ago = try Self.timeAgo(trimmed, typed: typed) { return .time(now - ago) }
        if let moment = try Self.dateAndTime(Array(trimmed.utf8), typed: typed) { return .time(moment) }
        throw VersionSelectorError(text: typed, problem: nil)
    }

    /// Milliseconds the text counts back (`10 minutes ago`, `10m`); nil when it is not a time ago.
    private static func timeAgo(_ text: String, typed: String) throws(VersionSelectorError) -> Int64? {
        var rest = Substring(text.lowercased())
        if rest.hasSuffix("ago") { rest = rest.dropLast(3) }
        rest = Substring(String(rest).trimmingWhitespace())
        let digits = rest.prefix { $0.isASCII && $0.isNumber }
        guard !digits.isEmpty else { return nil }
        let unit = String(rest.dropFirst(digits.count)).trimmingWhitespace()
        guard let length = Self.units[unit] else {
            // Digits then a word: meant as a time ago, so say which units there are.
            guard unit.first?.isLetter == true else { return nil }
            throw VersionSelectorError(
                text: typed,
                problem: "\"\(unit)\" is not a unit of time (seconds, minutes, hours, days, weeks, or s, m, h, d, w)")
        }
        guard let count = Int64(digits) else {
            throw VersionSelectorError(text: typed, problem: "\(digits) is too large")
        }
        let (milliseconds, overflow) = count.multipliedReportingOverflow(by: length)
        guard !overflow else { throw VersionSelectorError(text: typed, problem: "that is too long ago") }
        return milliseconds
    }

    /// Milliseconds in each unit a time ago may name.
    private static let units: [String: Int64] = {
        var units: [String: Int64] = [:]
        let lengths: [(names: [String], milliseconds: Int64)] = [
            (["s", "sec", "secs", "second", "seconds"], 1000),
            (["m", "min", "mins", "minute", "minutes"], 60_000),
            (["h", "hr", "hrs", "hour", "hours"], 3_600_000),
            (["d", "day", "days"], 86_400_000),
            (["w", "week", "weeks"], 604_800_000),
        ]
        for (names, milliseconds) in lengths {
            for name in names { units[name] = milliseconds }
        }
        return units
    }()

    /// Milliseconds since the epoch of `YYYY-MM-DD[(T| )HH:MM[:SS[.fff]]][Z|±HH[:]MM]`; nil when the
    /// text does not begin like a date.
    private static func dateAndTime(_ bytes: [UInt8], typed: String) throws(VersionSelectorError) -> Int64? {
        var reader = DigitReader(bytes: bytes)
        guard let year = reader.number(digits: 4), reader.skip("-") else { return nil }
        func fail(_ problem: String) -> VersionSelectorError { VersionSelectorError(text: typed, problem: problem) }
        guard let month = reader.number(digits: 2), reader.skip("-"), let day = reader.number(digits: 2) else {
            throw fail("a date is YYYY-MM-DD")
        }
        var (hour, minute, second, millisecond) = (0, 0, 0, 0)
        if reader.skip("T") || reader.skip("t") || reader.skip(" ") {
            guard let h = reader.number(digits: 2), reader.skip(":"), let m = reader.number(digits: 2) else {
                throw fail("a time is HH:MM or HH:MM:SS")
            }
            (hour, minute) = (h, m)
            if reader.skip(":") {
                guard let s = reader.number(digits: 2) else { throw fail("seconds are two digits") }
                second = s
                if reader.skip(".") || reader.skip(",") {
                    let fraction = reader.digits()
                    guard !fraction.isEmpty else { throw fail("a fraction of a second needs digits") }
                    millisecond = (fraction + [0, 0, 0]).prefix(3).reduce(0) { $0 * 10 + $1 }
                }
            }
        }
        guard (1...12).contains(month), (1...Self.days(inMonth: month, of: year)).contains(day) else {
            throw fail("\(year)-\(two(month))-\(two(day)) is not a date")
        }
        guard hour < 24, minute < 60, second < 60 else {
            throw fail("\(two(hour)):\(two(minute)):\(two(second)) is not a time of day")
        }
        var parts = tm()
        parts.tm_year = Int32(year - 1900)
        parts.tm_mon = Int32(month - 1)
        parts.tm_mday = Int32(day)
        parts.tm_hour = Int32(hour)
        parts.tm_min = Int32(minute)
        parts.tm_sec = Int32(second)
        let seconds: Int64
        if reader.isAtEnd {
            // Local time; whether summer time applies is for mktime to find out.
            parts.tm_isdst = -1
            seconds = Int64(mktime(&parts))
        } else if reader.skip("Z") || reader.skip("z") {
            guard reader.isAtEnd else { throw fail("nothing may follow the Z") }
            seconds = Int64(timegm(&parts))
        } else if let sign = reader.sign() {
            guard let offsetHours = reader.number(digits: 2) else { throw fail("an offset is +HH:MM or -HH:MM") }
            _ = reader.skip(":")
            let offsetMinutes = reader.number(digits: 2) ?? 0
            guard reader.isAtEnd, offsetHours < 24, offsetMinutes < 60 else {
                throw fail("an offset is +HH:MM or -HH:MM")
            }
            seconds = Int64(timegm(&parts)) - Int64(sign) * Int64(offsetHours * 3600 + offsetMinutes * 60)
        } else {
            throw fail("it should end after the time, or in Z or an offset such as +01:00")
        }
        return seconds * 1000 + Int64(millisecond)
    }

    private static func days(inMonth month: Int, of year: Int) -> Int {
        switch month {
        case 2: year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    private static func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }

    /// A moment as local time with its offset and milliseconds (`2026-11-27T10:00:03.120+01:00`):
    /// what a user reads, and can paste back after `@` to mean exactly that moment.
    public static func localTimestamp(_ milliseconds: Int64) -> String {
        var seconds = time_t(milliseconds >= 0 ? milliseconds / 1000 : (milliseconds - 999) / 1000)
        let fraction = Int(milliseconds - Int64(seconds) * 1000)
        var parts = tm()
        localtime_r(&seconds, &parts)
        let offset = Int(parts.tm_gmtoff) / 60
        let zone = offset == 0 ? "Z" : (offset < 0 ? "-" : "+") + two(abs(offset) / 60) + ":" + two(abs(offset) % 60)
        let milli = fraction < 10 ? "00\(fraction)" : fraction < 100 ? "0\(fraction)" : "\(fraction)"
        return "\(parts.tm_year + 1900)-\(two(Int(parts.tm_mon) + 1))-\(two(Int(parts.tm_mday)))"
            + "T\(two(Int(parts.tm_hour))):\(two(Int(parts.tm_min))):\(two(Int(parts.tm_sec))).\(milli)\(zone)"
    }
}

/// Reads fixed-width numbers and separators off the front of ASCII bytes.
private struct DigitReader {
    let bytes: [UInt8]
    var position = 0

    var isAtEnd: Bool { position == bytes.count }

    /// A number of exactly `digits` digits; nothing is consumed when there are not that many.
    mutating func number(digits: Int) -> Int? {
        guard position + digits <= bytes.count else { return nil }
        var value = 0
        for byte in bytes[position..<(position + digits)] {
            guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return nil }
            value = value * 10 + Int(byte - UInt8(ascii: "0"))
        }
        position += digits
        return value
    }

    /// Every digit from here on, as values.
    mutating func digits() -> [Int] {
        var values: [Int] = []
        while position < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[position]) {
            values.append(Int(bytes[position] - UInt8(ascii: "0")))
            position += 1
        }
        return values
    }

    /// Whether the next byte is `character`, consuming it if so.
    mutating func skip(_ character: Unicode.Scalar) -> Bool {
        guard position < bytes.count, bytes[position] == UInt8(ascii: character) else { return false }
        position += 1
        return true
    }

    /// +1 or -1 for a `+` or `-` next, consumed; nil otherwise.
    mutating func sign() -> Int? {
        if skip("+") { return 1 }
        if skip("-") { return -1 }
        return nil
    }
}
