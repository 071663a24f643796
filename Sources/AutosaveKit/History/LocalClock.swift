import Glibc

/// Reads moments as this machine's local wall-clock time, asking the C library for the zone's
/// offset once per hour of time rather than once per moment.
///
/// `localtime_r` takes a lock and walks the zone's rules on every call: for the 10,000 versions
/// of one `autosave history` it was a tenth of the listing. A zone's offset changes at most once
/// in any hour, so an hour whose first and last second have the same offset has it throughout.
public struct LocalClock: Sendable {
    /// The UTC hour (seconds since the epoch / 3600) whose offset is known, and that offset.
    private var hour = Int64.min
    private var offset: Int64 = 0
    /// The zone: seconds east of UTC at a moment.
    private let zoneOffset: @Sendable (Int64) -> Int64

    /// The machine's zone, as `localtime_r` reads it.
    public init() { zoneOffset = Self.libraryOffset }

    /// A zone given by its offset (seconds east of UTC) at each moment: tests' zones with
    /// changes at chosen moments.
    public init(zone: @escaping @Sendable (Int64) -> Int64) { zoneOffset = zone }

    /// Seconds east of UTC that local time is at `seconds` since the epoch.
    public mutating func offset(at seconds: Int64) -> Int64 {
        let hour = CivilDate.floorDivide(seconds, 3600)
        if hour == self.hour { return offset }
        let first = zoneOffset(hour * 3600)
        // An hour with a change in it: this moment asks the zone, and nothing is kept.
        guard first == zoneOffset(hour * 3600 + 3599) else { return zoneOffset(seconds) }
        (self.hour, offset) = (hour, first)
        return first
    }

    /// `2026-11-27 10:00:03`: the local date and time of `milliseconds` since the epoch.
    public mutating func append(_ milliseconds: Int64, to text: inout TextBytes) {
        let utc = CivilDate.floorDivide(milliseconds, 1000)
        text.appendDateTime(utc + offset(at: utc), separator: UInt8(ascii: " "))
    }

    /// The offset `localtime_r` gives for a moment.
    private static func libraryOffset(_ seconds: Int64) -> Int64 {
        var moment = time_t(seconds)
        var parts = tm()
        guard localtime_r(&moment, &parts) != nil else { return 0 }
        return Int64(parts.tm_gmtoff)
    }
}
