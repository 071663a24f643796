import AutosaveKit
import PropertyBased
import Testing

/// Ranged edits land where an editor means them, in any position encoding, or not at all.
@Suite struct RangedEditTests {
    /// A text built from known characters, so where each (line, character) is can be worked out
    /// from how it was built rather than by the code under test.
    struct ModelText {
        /// The characters of each line, and the line break after it.
        var lines: [(characters: [Unicode.Scalar], lineBreak: String)]

        static let alphabet: [Unicode.Scalar] = ["a", "b", " ", "é", "€", "😀", "\t", "z"]
        static let lineBreaks = ["\n", "\r\n", "\r", "\n"]

        init(codes: [Int]) {
            lines = []
            var current: [Unicode.Scalar] = []
            for code in codes {
                if code % 5 == 0 {
                    var lineBreak = Self.lineBreaks[code / 5 % Self.lineBreaks.count]
                    // "\r" then an empty line ending "\n" would be one "\r\n": keep them two breaks.
                    if current.isEmpty, lineBreak == "\n", lines.last?.lineBreak == "\r" { lineBreak = "\r\n" }
                    lines.append((current, lineBreak))
                    current = []
                } else {
                    current.append(Self.alphabet[code % Self.alphabet.count])
                }
            }
            lines.append((current, ""))
        }

        var bytes: [UInt8] { lines.flatMap { line in Array((String(String.UnicodeScalarView(line.characters)) + line.lineBreak).utf8) } }

        /// The byte offset of character `index` of line `line`.
        func offset(line: Int, character index: Int) -> Int {
            let before = lines[..<line].reduce(0) { $0 + $1.characters.reduce(0) { $0 + String($1).utf8.count } + $1.lineBreak.utf8.count }
            return before + lines[line].characters[..<index].reduce(0) { $0 + String($1).utf8.count }
        }

        /// Character `index` of line `line` as a client counting in `encoding` names it.
        func position(line: Int, character index: Int, _ encoding: PositionEncoding) -> TextPosition {
            let characters = lines[line].characters[..<index]
            let units = switch encoding {
            case .utf8: characters.reduce(0) { $0 + String($1).utf8.count }
            case .utf16: characters.reduce(0) { $0 + String($1).utf16.count }
            case .utf32: characters.count
            }
            return TextPosition(line: line, character: units)
        }
    }

    @Test func editsLandWhereTheModelSaysInEveryEncoding() throws {
        var random = Xoshiro(seed: (0x6564_6974, 0x7321_2121, 0x7261_6E67, 0x6564_2121))
        let texts = Gen.int(in: 0...1_000).array(of: 0...60)
        let picks = Gen.int(in: 0...1_000_000).array(of: 1...6)
        for index in 0..<500 {
            let model = ModelText(codes: texts.run(using: &random))
            let encoding = PositionEncoding.allCases[index % 3]
            // Points in the text (line, character), sorted, taken in pairs: ranges that never overlap.
            var points = picks.run(using: &random).flatMap { pick -> [(Int, Int)] in
                let line = pick % model.lines.count
                let first = pick / 7 % (model.lines[line].characters.count + 1)
                let second = pick / 11 % (model.lines[line].characters.count + 1)
                return [(line, first), (line, second)]
            }
            points.sort { $0 < $1 }
            var edits: [TextEdit] = []
            var expected = model.bytes
            var spliced: [(start: Int, end: Int, text: [UInt8])] = []
            for pair in stride(from: 0, to: points.count - 1, by: 2) {
                let (start, end) = (points[pair], points[pair + 1])
                let text = Array("[\(pair)é😀]".utf8)
                edits.append(TextEdit(
                    range: TextRange(
                        start: model.position(line: start.0, character: start.1, encoding),
                        end: model.position(line: end.0, character: end.1, encoding)),
                    text: text))
                spliced.append((model.offset(line: start.0, character: start.1), model.offset(line: end.0, character: end.1), text))
            }
            for splice in spliced.reversed() { expected.replaceSubrange(splice.start..<splice.end, with: splice.text) }
            // The request's order does not matter.
            let shuffled = edits.enumerated().sorted { ($0.offset * 7919) % 13 < ($1.offset * 7919) % 13 }.map(\.element)
            #expect(try RangedEdit.apply(shuffled, to: model.bytes, encoding: encoding) == expected, "case \(index), \(encoding)")
        }
    }

    let text = Array("héllo\r\nw😀rld\nlast".utf8)

    func apply(_ edits: [(Int, Int, Int, Int, String)], _ encoding: PositionEncoding = .utf16) throws(TextEditError) -> String {
        let ranged = edits.map {
            TextEdit(range: TextRange(start: TextPosition(line: $0.0, character: $0.1), end: TextPosition(line: $0.2, character: $0.3)), text: Array($0.4.utf8))
        }
        return String(decoding: try RangedEdit.apply(ranged, to: text, encoding: encoding), as: UTF8.self)
    }

    @Test func positionsCountInTheRequestsEncoding() throws {
        // "w😀rld": 😀 is 4 bytes, 2 UTF-16 units, 1 scalar; insert after it.
        #expect(try apply([(1, 5, 1, 5, "|")], .utf8) == "héllo\r\nw😀|rld\nlast")
        #expect(try apply([(1, 3, 1, 3, "|")], .utf16) == "héllo\r\nw😀|rld\nlast")
        #expect(try apply([(1, 2, 1, 2, "|")], .utf32) == "héllo\r\nw😀|rld\nlast")
    }

    @Test func aLineBreakIsNotPartOfItsLineAndCanBeReplaced() throws {
        #expect(try apply([(0, 5, 0, 5, "!")]) == "héllo!\r\nw😀rld\nlast", "the end of a line is before \\r\\n")
        #expect(try apply([(0, 5, 1, 0, " ")]) == "héllo w😀rld\nlast", "joining two lines removes the whole \\r\\n")
        #expect(try apply([(2, 4, 2, 4, "\n")]) == "héllo\r\nw😀rld\nlast\n")
    }

    @Test func insertsAtOnePlaceKeepTheirOrderAndTouchingEditsAreFine() throws {
        #expect(try apply([(2, 0, 2, 0, "1"), (2, 0, 2, 0, "2"), (2, 0, 2, 2, "L")]) == "héllo\r\nw😀rld\n12Lst")
        #expect(try apply([(2, 2, 2, 4, "ST"), (2, 0, 2, 2, "LA")]) == "héllo\r\nw😀rld\nLAST")
        // An insert where a replacement starts touches it, whichever comes first in the request.
        #expect(try apply([(2, 0, 2, 2, "L"), (2, 0, 2, 0, "1")]) == "héllo\r\nw😀rld\n1Lst")
    }

    @Test func eachBadEditIsNamedAndNothingIsApplied() {
        #expect(throws: TextEditError.noSuchLine(edit: 1, TextPosition(line: 3, character: 0), lineCount: 3)) {
            try apply([(0, 0, 0, 0, "x"), (3, 0, 3, 0, "y")])
        }
        #expect(throws: TextEditError.pastEndOfLine(edit: 0, TextPosition(line: 0, character: 6), lineLength: 5, .utf16)) {
            try apply([(0, 6, 0, 6, "x")])
        }
        #expect(throws: TextEditError.insideCharacter(edit: 0, TextPosition(line: 1, character: 2), .utf16)) {
            try apply([(1, 2, 1, 2, "x")])
        }
        #expect(throws: TextEditError.insideCharacter(edit: 0, TextPosition(line: 0, character: 2), .utf8)) {
            try apply([(0, 2, 0, 2, "x")], .utf8)
        }
        #expect(throws: TextEditError.backwards(edit: 0, TextRange(start: TextPosition(line: 1, character: 1), end: TextPosition(line: 0, character: 0)))) {
            try apply([(1, 1, 0, 0, "x")])
        }
        let first = TextRange(start: TextPosition(line: 0, character: 1), end: TextPosition(line: 0, character: 4))
        let second = TextRange(start: TextPosition(line: 0, character: 3), end: TextPosition(line: 1, character: 0))
        #expect(throws: TextEditError.overlapping(first: 0, first, second: 1, second)) {
            try apply([(0, 3, 1, 0, "b"), (0, 1, 0, 4, "a")].reversed())
        }
        let message = TextEditError.pastEndOfLine(edit: 2, TextPosition(line: 0, character: 9), lineLength: 5, .utf16).description
        #expect(message == "edit 2: character 9 is past the end of line 0, which is 5 UTF-16 code units long")
    }

    @Test func bytesThatAreNotUTF8CountAsOneCharacterEach() throws {
        let binary: [UInt8] = [0x61, 0xFF, 0xC3, 0x62, 0x0A]
        let edit = TextEdit(range: TextRange(start: TextPosition(line: 0, character: 3), end: TextPosition(line: 0, character: 4)), text: [0x42])
        for encoding in PositionEncoding.allCases {
            #expect(try RangedEdit.apply([edit], to: binary, encoding: encoding) == [0x61, 0xFF, 0xC3, 0x42, 0x0A])
        }
    }
}
