import AutosaveKit
import Testing

/// The bytes listings and answers are written into: what is appended is there, in order, however
/// far past the room first reserved, and numbers are their decimal text.
@Suite struct TextBytesTests {
    func text(_ bytes: TextBytes) -> String { String(decoding: bytes.bytes, as: UTF8.self) }

    @Test func numbersAsDecimalPaddedAndSigned() {
        var bytes = TextBytes()
        let cases: [(Int64, Int, String)] = [
            (0, 1, "0"), (7, 1, "7"), (7, 3, "007"), (-7, 3, "-007"), (10, 1, "10"), (999, 2, "999"), (1_795_854_477_940, 1, "1795854477940"),
            (Int64.max, 1, "9223372036854775807"), (Int64.min, 1, "-9223372036854775808"), (5, 20, "00000000000000000005"),
        ]
        for (value, digits, expected) in cases {
            bytes.removeAll()
            bytes.appendDecimal(value, minimumDigits: digits)
            #expect(text(bytes) == expected, "\(value), \(digits) digits")
            #expect(String(value).count <= bytes.count)
        }
    }

    @Test func appendsGrowPastTheRoomReservedAndKeepTheirOrder() {
        var bytes = TextBytes(capacity: 3)
        var expected = ""
        for index in 0..<5000 {
            bytes.append(text: "a")
            bytes.append(utf8: "é\(index)")
            bytes.append(UInt8(ascii: ","))
            bytes.append(contentsOf: Array("a run longer than twenty-four bytes, then more".utf8))
            bytes.appendDecimal(Int64(index))
            expected += "aé\(index),a run longer than twenty-four bytes, then more\(index)"
        }
        #expect(text(bytes) == expected)
        #expect(bytes.count == expected.utf8.count)
        bytes.withUnsafeBytes { #expect(Array($0) == Array(expected.utf8)) }
        let copy = bytes
        #expect(copy.takeBytes() == Array(expected.utf8))
        bytes.removeAll()
        bytes.append(text: "again")
        #expect(text(bytes) == "again")
        #expect(bytes.takeBytes() == Array("again".utf8))
    }
}
