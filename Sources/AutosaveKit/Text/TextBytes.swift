/// Text being written as bytes: literals, strings, numbers and dates stored straight into room
/// reserved ahead, with one check of that room a piece, not a byte.
///
/// A listing or an answer of 10,000 versions is a hundred thousand pieces of 1 to 20 bytes:
/// appended to a `[UInt8]` each paid a call of `append(contentsOf:)`, or a uniqueness and
/// capacity check a byte, and writing numbers was a third of writing `history`'s answer.
public struct TextBytes: Sendable {
    /// The bytes: the first `count` written, the rest room (zeros) for what comes next.
    private var storage: [UInt8]
    /// How many bytes are written.
    public private(set) var count = 0

    /// - Parameter capacity: room to reserve, when the size of the text is roughly known.
    public init(capacity: Int = 0) {
        storage = [UInt8](repeating: 0, count: max(capacity, 64))
    }

    /// The bytes written, copied out.
    public var bytes: [UInt8] { Array(storage[..<count]) }

    /// The bytes written, handed over without a copy.
    public consuming func takeBytes() -> [UInt8] {
        storage.removeLast(storage.count - count)
        return storage
    }

    /// Forgets what is written, keeping the room.
    public mutating func removeAll() { count = 0 }

    /// Calls `body` with the bytes written.
    public func withUnsafeBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        try storage.withUnsafeBytes { try body(UnsafeRawBufferPointer(rebasing: $0[..<count])) }
    }

    /// Stores `size` bytes after those written, with `body`, which gets where they go.
    private mutating func write(_ size: Int, _ body: (UnsafeMutablePointer<UInt8>) -> Void) {
        let end = count
        if end + size > storage.count {
            // Zeros made by memset and copied whole: `repeatElement` went a byte at a time.
            storage += [UInt8](repeating: 0, count: max(end + size, storage.count * 2) - storage.count)
        }
        storage.withUnsafeMutableBufferPointer { body($0.baseAddress! + end) }
        count = end + size
    }

    /// Appends one byte.
    public mutating func append(_ byte: UInt8) {
        write(1) { $0.pointee = byte }
    }

    /// Appends `bytes` as they are.
    public mutating func append(_ bytes: UnsafeBufferPointer<UInt8>) {
        guard let source = bytes.baseAddress, !bytes.isEmpty else { return }
        write(bytes.count) { $0.update(from: source, count: bytes.count) }
    }

    /// Appends `bytes` as they are.
    public mutating func append(contentsOf bytes: [UInt8]) {
        bytes.withUnsafeBufferPointer { append($0) }
    }

    /// Appends a literal's bytes.
    public mutating func append(text: StaticString) {
        text.withUTF8Buffer { append($0) }
    }

    /// Appends a string's UTF-8, copied whole (a short string's bytes too, which are not stored
    /// where `text.utf8` gives them as one run).
    public mutating func append(utf8 text: String) {
        var text = text
        text.withUTF8 { append($0) }
    }

    /// Appends `value` in decimal, zero-padded to `minimumDigits`, a minus sign first when it is
    /// negative: the digits stored from the right where they go, with no String of them.
    public mutating func appendDecimal(_ value: Int64, minimumDigits: Int = 1) {
        var digits = 1
        var probe = value.magnitude
        while probe >= 10 {
            probe /= 10
            digits += 1
        }
        let sign = value < 0 ? 1 : 0
        let width = sign + max(digits, minimumDigits)
        write(width) { out in
            var rest = value.magnitude
            var index = width - 1
            repeat {
                out[index] = UInt8(ascii: "0") + UInt8(rest % 10)
                rest /= 10
                index -= 1
            } while rest > 0
            while index >= sign {
                out[index] = UInt8(ascii: "0")
                index -= 1
            }
            if sign == 1 { out[0] = UInt8(ascii: "-") }
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

