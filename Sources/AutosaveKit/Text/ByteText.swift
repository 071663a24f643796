/// Text, numbers and dates written straight into a byte array: without the String that
/// `String(value)`, an interpolation or `gmtime_r` and a format make and drop for each one.
extension [UInt8] {
    /// Appends `bytes`; a few are appended one by one, which costs less than the call that
    /// copies a run (a listing or an answer is made of a hundred thousand pieces of 1 to 20 bytes).
    mutating func append(few bytes: UnsafeBufferPointer<UInt8>) {
        guard bytes.count <= 24 else { return append(contentsOf: bytes) }
        for byte in bytes { append(byte) }
    }

    /// Appends a literal's bytes.
    mutating func append(text: StaticString) {
        text.withUTF8Buffer { append(few: $0) }
    }

    /// Appends a string's UTF-8, copied whole (a short string's bytes too, which are not stored
    /// where `append(contentsOf: text.utf8)` finds them and went one by one).
    mutating func append(utf8 text: String) {
        var text = text
        text.withUTF8 { append(few: $0) }
    }

    /// Appends `value` in decimal, zero-padded to `minimumDigits`, a minus sign first when it is
    /// negative.
    mutating func appendDecimal(_ value: Int64, minimumDigits: Int = 1) {
        if value < 0 { append(UInt8(ascii: "-")) }
        var rest = value.magnitude
        // From the right into a buffer on the stack, then copied whole: appending digit by
        // digit and reversing was a third of writing `history`'s answer.
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { digits in
            var start = 20
            repeat {
                start -= 1
                digits[start] = UInt8(ascii: "0") + UInt8(rest % 10)
                rest /= 10
            } while rest > 0 || (20 - start < minimumDigits && start > 0)
            append(few: UnsafeBufferPointer(rebasing: digits[start...]))
        }
    }

    /// Appends `2026-11-27` + `separator` + `10:00:03`: the calendar date and time of `seconds`
    /// counted from 1970-01-01 00:00 (UTC's epoch, or a local one: the caller adds the offset).
    mutating func appendDateTime(_ seconds: Int64, separator: UInt8) {
        let days = CivilDate.floorDivide(seconds, 86_400)
        let second = seconds - days * 86_400
        let date = CivilDate(daysSinceEpoch: days)
        appendDecimal(date.year, minimumDigits: 4)
        append(UInt8(ascii: "-"))
        appendDecimal(date.month, minimumDigits: 2)
        append(UInt8(ascii: "-"))
        appendDecimal(date.day, minimumDigits: 2)
        append(separator)
        appendDecimal(second / 3600, minimumDigits: 2)
        append(UInt8(ascii: ":"))
        appendDecimal(second / 60 % 60, minimumDigits: 2)
        append(UInt8(ascii: ":"))
        appendDecimal(second % 60, minimumDigits: 2)
    }

    /// Appends `2026-11-27T10:00:03.120Z`: `milliseconds` since the epoch in RFC 3339, UTC.
    mutating func appendTimestamp(_ milliseconds: Int64) {
        let seconds = CivilDate.floorDivide(milliseconds, 1000)
        appendDateTime(seconds, separator: UInt8(ascii: "T"))
        append(UInt8(ascii: "."))
        appendDecimal(milliseconds - seconds * 1000, minimumDigits: 3)
        append(UInt8(ascii: "Z"))
    }
}

/// A day of the proleptic Gregorian calendar.
struct CivilDate: Equatable {
    var year: Int64
    var month: Int64
    var day: Int64

    init(year: Int64, month: Int64, day: Int64) {
        (self.year, self.month, self.day) = (year, month, day)
    }

    /// The date of a day counted from 1970-01-01 (Howard Hinnant's `civil_from_days`): exact for
    /// every day an Int64 of seconds can name, before the epoch too.
    init(daysSinceEpoch days: Int64) {
        let shifted = days + 719_468
        let era = Self.floorDivide(shifted, 146_097)
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthFromMarch = (5 * dayOfYear + 2) / 153
        day = dayOfYear - (153 * monthFromMarch + 2) / 5 + 1
        month = monthFromMarch < 10 ? monthFromMarch + 3 : monthFromMarch - 9
        year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
    }

    /// `value / divisor` rounded down, not toward zero: moments before the epoch fall on the day
    /// (and second) they are in.
    static func floorDivide(_ value: Int64, _ divisor: Int64) -> Int64 {
        let quotient = value / divisor
        return value % divisor < 0 ? quotient - 1 : quotient
    }
}
