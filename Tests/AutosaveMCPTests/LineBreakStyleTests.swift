@testable import AutosaveMCP
import Testing

/// The line breaks text takes when it goes into a file (issue 33, item 7).
@Suite struct LineBreakStyleTests {
    func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

    @Test func theStyleIsWhatMostLinesEndWith() {
        #expect(LineBreakStyle.of(bytes("a\r\nb\r\nc\n")) == .crlf)
        #expect(LineBreakStyle.of(bytes("a\nb\nc\r\n")) == .lf)
        #expect(LineBreakStyle.of(bytes("a\r\nb\n")) == nil, "a tie says nothing")
        #expect(LineBreakStyle.of(bytes("one line")) == nil)
        #expect(LineBreakStyle.of(bytes("old\rmac\r")) == nil, "a lone \\r is no line break here")
    }

    @Test func spellingChangesLineBreaksOnly() {
        #expect(LineBreakStyle.crlf.spell(bytes("A\nB\r\nC\n")) == bytes("A\r\nB\r\nC\r\n"))
        #expect(LineBreakStyle.lf.spell(bytes("A\r\nB\nC\r\n")) == bytes("A\nB\nC\n"))
        #expect(LineBreakStyle.crlf.spell(bytes("a\rb")) == bytes("a\rb"))
        #expect(LineBreakStyle.lf.spell(bytes("\r\r\n")) == bytes("\r\n"))
    }
}
