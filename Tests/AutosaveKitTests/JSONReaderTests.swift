import AutosaveKit
import Testing

/// What the reader makes of strings and objects on its fast paths: a string without escapes is
/// made straight from the text, and a small object's keys are checked for duplicates by a scan.
@Suite struct JSONReaderTests {
    func parsed(_ text: String) throws -> JSONValue { try JSONReader.parse(Array(text.utf8)) }

    func message(of text: [UInt8]) -> String? {
        do {
            _ = try JSONReader.parse(text)
            return nil
        } catch {
            return error.message
        }
    }

    @Test func stringsWithAndWithoutEscapesAndUnicode() throws {
        #expect(try parsed(#""plain""#) == .string("plain"))
        #expect(try parsed(#""""#) == .string(""))
        #expect(try parsed(#""café 😀""#) == .string("café 😀"))
        #expect(try parsed(#""a\"b\\c\n\u00e9\ud83d\ude00/""#) == .string("a\"b\\c\né😀/"))
        #expect(try parsed(#""é\tü""#) == .string("é\tü"))
        #expect(try parsed("[\"a long string of more than fifteen bytes\",\"x\"]") == .array([.string("a long string of more than fifteen bytes"), .string("x")]))
    }

    @Test func invalidUTF8IsRefusedWithOrWithoutEscapes() {
        #expect(message(of: [0x22, 0xC3, 0x28, 0x22]) == "invalid UTF-8 in a string")
        #expect(message(of: [0x22, 0x5C, 0x6E, 0xFF, 0x22]) == "invalid UTF-8 in a string")
    }

    @Test func literalsAndTheirMisspellings() throws {
        #expect(try parsed("[true,false,null]") == .array([.bool(true), .bool(false), .null]))
        #expect(message(of: Array("[tru]".utf8)) == "expected a value, found `t`")
        #expect(message(of: Array("nul".utf8)) == "expected a value, found `n`")
    }

    @Test func aDuplicateKeyIsFoundInSmallAndLargeObjects() {
        #expect(message(of: Array(#"{"a":1,"b":2,"a":3}"#.utf8)) == "duplicate key `a`")
        // Across the point where the scan gives way to a set, both before and after it.
        for count in [15, 16, 17, 40] {
            let keys = (0..<count).map { "\"k\($0)\":\($0)" }.joined(separator: ",")
            #expect(message(of: Array("{\(keys),\"k0\":0}".utf8)) == "duplicate key `k0`", "\(count) keys")
            #expect(message(of: Array("{\(keys),\"k\(count - 1)\":0}".utf8)) == "duplicate key `k\(count - 1)`", "\(count) keys")
            #expect(message(of: Array("{\(keys),\"k\(count)\":0}".utf8)) == nil, "\(count) keys")
        }
    }

    @Test func keysThatDifferOnlyInNormalFormAreTwoKeysOrOne() {
        // Swift compares Strings by canonical equivalence: so did the set before, so does the scan.
        #expect(message(of: Array("{\"caf\u{E9}\":1,\"cafe\u{301}\":2}".utf8)) == "duplicate key `cafe\u{301}`")
    }

    /// `JSONReader.read` with `body`, or the message of what it threw.
    func pieces<Value>(_ text: String, _ body: (inout JSONReader) throws(JSONReader.SyntaxError) -> Value) -> Result<Value, JSONReader.SyntaxError> {
        Array(text.utf8).withUnsafeBytes { bytes in Result { () throws(JSONReader.SyntaxError) in try JSONReader.read(bytes, body) } }
    }

    @Test func wholeNumbersAreReadFromTheTextAtBothEnds() throws {
        func integer(_ text: String) -> Result<Int64, JSONReader.SyntaxError> { pieces(text) { reader throws(JSONReader.SyntaxError) in try reader.readInteger() } }
        for value in [0, 7, -7, 1_795_854_477_940, Int64.max, Int64.min] {
            #expect(try integer(" \(value) ").get() == value)
        }
        #expect(try integer("-0").get() == 0)
        #expect((try? integer("9223372036854775808").get()) == nil)
        #expect((try? integer("-9223372036854775809").get()) == nil)
        #expect((try? integer("1.0").get()) == nil)
        #expect((try? integer("1e3").get()) == nil)
        #expect((try? integer("01").get()) == nil)
        #expect((try? integer("\"1\"").get()) == nil)
        #expect((try? integer("1 2").get()) == nil, "what follows the value is refused")
    }

    @Test func objectsArraysStringsAndNullsPieceByPiece() throws {
        let text = #"{"a":[1,null,"x"],"b":{"c":true},"d":null}"#
        let read = pieces(text) { reader throws(JSONReader.SyntaxError) -> [String] in
            var seen: [String] = []
            try reader.readObject { reader, key, position throws(JSONReader.SyntaxError) in
                seen.append("\(key)@\(position.column)")
                switch key {
                case "a":
                    try reader.readArray { reader throws(JSONReader.SyntaxError) in
                        if reader.readNull() { seen.append("null") } else if reader.isAtObject { seen.append("object") } else {
                            seen.append((try reader.readValue()).jsonText)
                        }
                    }
                case "b": seen.append(String(reader.isAtObject) + (try reader.readValue()).jsonText)
                default: seen.append(String(reader.readNull()))
                }
            }
            return seen
        }
        let got = try read.get()
        #expect(got == ["a@2", "1", "null", "\"x\"", "b@19", "true{\"c\":true}", "d@34", "true"], "\(got)")
        #expect(try pieces(#"["a","b"]"#) { reader throws(JSONReader.SyntaxError) -> [String] in
            var strings: [String] = []
            try reader.readArray { reader throws(JSONReader.SyntaxError) in strings.append(try reader.readString()) }
            return strings
        }.get() == ["a", "b"])
        #expect(try pieces("[]") { reader throws(JSONReader.SyntaxError) -> Int in
            var count = 0
            try reader.readArray { _ throws(JSONReader.SyntaxError) in count += 1 }
            return count
        }.get() == 0)
        let misses: [(String, String)] = [
            (#"{"a":1,}"#, "trailing comma before `}`"), (#"{"a" 1}"#, "expected `:` after key `a`, found `1`"), (#"{"a":[1"#, "expected `,` or `]`, found end of file"),
            ("7", "expected an object, found `7`"), (#"{"a":1} x"#, "unexpected `x` after the end of the document"),
        ]
        for (text, expected) in misses {
            let result = pieces(text) { reader throws(JSONReader.SyntaxError) in
                try reader.readObject { reader, _, _ throws(JSONReader.SyntaxError) in _ = try reader.readValue() }
            }
            guard case .failure(let error) = result else {
                Issue.record("read \(text)")
                continue
            }
            #expect(error.message == expected, "\(text)")
        }
        #expect((try? pieces("1") { reader throws(JSONReader.SyntaxError) in try reader.readString() }.get()) == nil)
    }
}
