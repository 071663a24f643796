import AutosaveKit
import Testing

/// The JSON text the agent and the CLI write: every answer on the socket, `--json` output. What
/// is written must read back as the same value, escapes and all.
@Suite struct JSONWriterTests {
    @Test func numbersAreDecimalAtBothEnds() {
        var writer = JSONWriter()
        for value in [0, 7, -7, 10, 1_795_854_477_940, Int64.max, Int64.min] {
            writer.number(value)
            writer.raw(",")
        }
        writer.number(UInt64.max)
        #expect(writer.text == "0,7,-7,10,1795854477940,9223372036854775807,-9223372036854775808,18446744073709551615")
    }

    @Test func stringsEscapeQuotesBackslashesAndControlCharactersOnly() {
        var writer = JSONWriter()
        writer.string("plain")
        writer.string("a \"quote\" and a \\ back\nslash\t\r\u{01}\u{1F}")
        writer.string("café \u{1F600} cafe\u{301}")
        writer.string("")
        #expect(
            writer.text
                == #""plain""a \"quote\" and a \\ back\nslash\t\r\u0001\u001f""café 😀 cafe\#u{301}""""#)
    }

    @Test func aValueReadsBackAsItself() throws {
        let value = JSONValue.object([
            JSONMember(key: "versions", value: .array([.number("1"), .number("-2.5e3"), .null, .bool(true), .bool(false)]), position: .init(line: 0, column: 0)),
            JSONMember(key: "path\"\n", value: .string("ü/\u{0}/\\"), position: .init(line: 0, column: 0)),
            JSONMember(key: "nested", value: .object([]), position: .init(line: 0, column: 0)),
            JSONMember(key: "empty", value: .array([]), position: .init(line: 0, column: 0)),
        ])
        let text = value.jsonText
        #expect(text == #"{"versions":[1,-2.5e3,null,true,false],"path\"\n":"ü/\u0000/\\","nested":{},"empty":[]}"#)
        #expect(try Self.withoutPositions(JSONReader.parse(Array(text.utf8))) == value)
    }

    @Test func quotedTextIsTheWritersString() {
        for text in ["plain", "tab\there", "quote\"", "\u{7}"] {
            var writer = JSONWriter()
            writer.string(text)
            #expect(JSONValue.quoted(text) == writer.text)
        }
    }

    /// The value with every member's position zeroed, as values built in code have them.
    static func withoutPositions(_ value: JSONValue) -> JSONValue {
        switch value {
        case .array(let items): .array(items.map(withoutPositions))
        case .object(let members):
            .object(members.map { JSONMember(key: $0.key, value: withoutPositions($0.value), position: .init(line: 0, column: 0)) })
        default: value
        }
    }
}
