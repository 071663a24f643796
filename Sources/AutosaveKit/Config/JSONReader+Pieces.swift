import Glibc

/// Reading a document piece by piece, for a caller that knows its shape: the values it wants
/// are made straight from the text, and no `JSONValue` tree is built for the rest.
///
/// The 10,000 versions of one `history` answer, read as a tree, were five megabytes of members
/// made and dropped: half of what `autosave history` spent.
extension JSONReader {
    /// Reads the one value `bytes` hold with `body`, which must read all of it.
    ///
    /// - Throws: `SyntaxError` from `body`, or when anything but whitespace follows the value.
    public static func read<Value>(
        _ bytes: UnsafeRawBufferPointer, _ body: (inout JSONReader) throws(SyntaxError) -> Value
    ) throws(SyntaxError) -> Value {
        var reader = JSONReader(bytes)
        reader.skipWhitespace()
        let value = try body(&reader)
        reader.skipWhitespace()
        guard reader.index == bytes.count else { throw reader.error("unexpected \(reader.describeCurrent()) after the end of the document") }
        return value
    }

    /// The next value, whole.
    public mutating func readValue() throws(SyntaxError) -> JSONValue { try parseValue() }

    /// Reads past the next value, checked as strictly as `readValue` checks it, making nothing
    /// of it (a string passed over is not copied out).
    public mutating func skipValue() throws(SyntaxError) {
        if index < bytes.count, bytes[index] == UInt8(ascii: "\"") {
            _ = try parseString(keeping: false)
        } else {
            _ = try parseValue()
        }
    }

    /// The next value, which must be a string.
    public mutating func readString() throws(SyntaxError) -> String {
        guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw error("expected a string, found \(describeCurrent())") }
        return try parseString()
    }

    /// The next value, which must be a whole number from `Int64.min` to `Int64.max` (no
    /// fraction, no exponent); read from the text, with no String made of it.
    public mutating func readInteger() throws(SyntaxError) -> Int64 {
        guard index < bytes.count, bytes[index] == UInt8(ascii: "-") || (bytes[index] >= UInt8(ascii: "0") && bytes[index] <= UInt8(ascii: "9"))
        else { throw error("expected a whole number, found \(describeCurrent())") }
        let start = position
        let range = try scanNumber()
        let isNegative = bytes[range.lowerBound] == UInt8(ascii: "-")
        var value: Int64 = 0
        for offset in range.dropFirst(isNegative ? 1 : 0) {
            let digit = bytes[offset] &- UInt8(ascii: "0")
            guard digit < 10 else { throw SyntaxError(message: "expected a whole number, found a fraction or an exponent", position: start) }
            let (shifted, overflowed) = value.multipliedReportingOverflow(by: 10)
            // Gathered as a negative number: Int64.min has no positive twin.
            let (next, underflowed) = shifted.subtractingReportingOverflow(Int64(digit))
            guard !overflowed, !underflowed else { throw SyntaxError(message: "a whole number out of range", position: start) }
            value = next
        }
        if isNegative { return value }
        guard value != .min else { throw SyntaxError(message: "a whole number out of range", position: start) }
        return -value
    }

    /// Bytes of the text not read yet: an upper bound, to reserve room for what they hold.
    public var remainingByteCount: Int { bytes.count - index }

    /// Whether the next value is an object (`readObject` reads it).
    public var isAtObject: Bool { index < bytes.count && bytes[index] == UInt8(ascii: "{") }

    /// Whether the next value is `null`; when it is, it is read.
    public mutating func readNull() -> Bool {
        guard bytes.count - index >= 4, memcmp(bytes.baseAddress! + index, "null", 4) == 0 else { return false }
        index += 4
        return true
    }

    /// An error at where the reader stands: for a value of the right syntax but the wrong meaning.
    public func failure(_ message: String) -> SyntaxError { error(message) }
}
