import AutosaveKit
@testable import AutosaveMCP
import Testing

/// Where a coding agent's `old_string` lands, and what it is told when it does not.
@Suite struct ExactReplacementTests {
    func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

    @Test func aUniqueOccurrenceIsReplacedInPlace() throws {
        let placed = try ExactReplacement.place(bytes("return 1"), bytes("return 2"), in: bytes("a\n  return 1\nb\n"), all: false)
        #expect(placed.result == bytes("a\n  return 2\nb\n"))
        #expect(placed.ranges == [4..<12])
    }

    @Test func severalOccurrencesAreRefusedWithTheirLinesUnlessAllAreAskedFor() throws {
        let text = bytes("x = 1\ny = 2\nx = 1\n\nx = 1\n")
        #expect(throws: ExactReplacement.Failure.ambiguous(lines: [1, 3, 5])) {
            try ExactReplacement.place(bytes("x = 1"), bytes("x = 9"), in: text, all: false)
        }
        let all = try ExactReplacement.place(bytes("x = 1"), bytes("x = 9"), in: text, all: true)
        #expect(all.result == bytes("x = 9\ny = 2\nx = 9\n\nx = 9\n"))
    }

    @Test func occurrencesDoNotOverlap() {
        #expect(ExactReplacement.occurrences(of: bytes("aa"), in: bytes("aaaaa")) == [0..<2, 2..<4])
        #expect(ExactReplacement.occurrences(of: bytes("abc"), in: bytes("ab")) == [])
    }

    @Test func textNotThereNamesTheNearestLine() {
        let text = bytes("func main() {\n    let total = items.count\n    print(total)\n}\n")
        #expect(throws: ExactReplacement.Failure.notFound(nearestLine: 2, nearestText: "    let total = items.count")) {
            try ExactReplacement.place(bytes("let  total = items.cnt"), bytes("x"), in: text, all: false)
        }
        #expect(throws: ExactReplacement.Failure.notFound(nearestLine: 7, nearestText: "line 7")) {
            try ExactReplacement.place(bytes("lin 7"), bytes("x"), in: bytes((1...9).map { "line \($0)\n" }.joined()), all: false)
        }
        #expect(throws: ExactReplacement.Failure.notFound(nearestLine: nil, nearestText: nil)) {
            try ExactReplacement.place(bytes("zzzz qqqq"), bytes("x"), in: text, all: false)
        }
    }

    @Test func emptyOrUnchangedReplacementsAreRefused() {
        #expect(throws: ExactReplacement.Failure.emptyOldString) { try ExactReplacement.place([], bytes("x"), in: bytes("x"), all: false) }
        #expect(throws: ExactReplacement.Failure.noChange) { try ExactReplacement.place(bytes("x"), bytes("x"), in: bytes("x"), all: false) }
    }

    @Test func positionsCountLineBreaksAsTheAgentDoes() {
        let text = bytes("a\r\nbé\rc\nd")
        func position(_ offset: Int) -> String {
            let position = CodingAgentSession.position(of: offset, in: text)
            return #"{"line":\#(position.line),"character":\#(position.character)}"#
        }
        #expect(position(0) == #"{"line":0,"character":0}"#)
        #expect(position(3) == #"{"line":1,"character":0}"#)
        #expect(position(6) == #"{"line":1,"character":3}"#)
        #expect(position(7) == #"{"line":2,"character":0}"#)
        #expect(position(10) == #"{"line":3,"character":1}"#)
    }

    @Test func changedLinesNameTheSpanBetweenWhatBothShare() {
        #expect(CodingAgentSession.changedLines(from: bytes("a\nb\nc\nd\n"), to: bytes("a\nB\nC\nd\n")) == "lines 2–3 changed")
        #expect(CodingAgentSession.changedLines(from: bytes("a\nb\n"), to: bytes("a\nx\nb\n")) == "lines added after line 1")
        #expect(LineBreakStyle.crlf.spell(bytes("a\nb\r\nc")) == bytes("a\r\nb\r\nc"))
    }
}
