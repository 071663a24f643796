// libFuzzer target: ranged edits (`edit` on the socket) applied to a buffer's text, request
// after request, compared with a plain model: the text as an array of bytes, positions worked
// out from the Unicode scalars it was built from, splices made with `replaceSubrange`.
// Build and run with `Fuzz/run [SECONDS]`; seeds are in Fuzz/Seeds/FuzzEdits/.
//
// The text is what `FileBuffer.edit` holds and changes: a `TextRope`, placed with
// `RangedEdit.place` and spliced with `applying`. The input's bytes pick the text (repeated so
// that it spans several of the rope's chunks), then requests of up to four edits each, each in
// one of the three position encodings. A request the model says is valid must give the model's
// bytes; one it says is not (a position past a line's end, inside a character, on no line, or
// overlapping another) must be refused with the text unchanged.
import AutosaveKit

/// The characters texts are made of: one, two, three and four UTF-8 bytes, and line breaks.
private let alphabet: [String] = ["a", "b", " ", "é", "€", "😀", "\t", "z", "\n", "\r\n", "\r", "q"]

/// Reads the fuzz input one number at a time (zeros once it runs out).
private struct InputReader {
    var bytes: UnsafeBufferPointer<UInt8>
    var offset = 0
    var isAtEnd: Bool { offset >= bytes.count }
    mutating func next() -> Int {
        defer { offset += 1 }
        return offset < bytes.count ? Int(bytes[offset]) : 0
    }
}

/// The model: a text of valid UTF-8, its lines as lists of scalars.
private struct ModelText {
    var bytes: [UInt8]
    /// Per line: its scalars and the offset where it starts.
    var lines: [(start: Int, scalars: [Unicode.Scalar])] = []

    init(_ bytes: [UInt8]) {
        self.bytes = bytes
        let scalars = Array(String(decoding: bytes, as: UTF8.self).unicodeScalars)
        var current: [Unicode.Scalar] = []
        var start = 0
        var offset = 0
        var index = 0
        while index < scalars.count {
            let scalar = scalars[index]
            if scalar == "\n" || scalar == "\r" {
                lines.append((start, current))
                offset += 1
                if scalar == "\r", index + 1 < scalars.count, scalars[index + 1] == "\n" {
                    offset += 1
                    index += 1
                }
                current = []
                start = offset
            } else {
                current.append(scalar)
                offset += scalar.utf8.count
            }
            index += 1
        }
        lines.append((start, current))
    }

    static func units(_ scalar: Unicode.Scalar, _ encoding: PositionEncoding) -> Int {
        switch encoding {
        case .utf8: scalar.utf8.count
        case .utf16: scalar.utf16.count
        case .utf32: 1
        }
    }

    /// The byte offset of `position`, or nil when an editor could not mean it.
    func offset(of position: TextPosition, _ encoding: PositionEncoding) -> Int? {
        guard position.line >= 0, position.line < lines.count, position.character >= 0 else { return nil }
        let line = lines[position.line]
        var counted = 0
        var offset = line.start
        for scalar in line.scalars {
            if counted == position.character { return offset }
            counted += Self.units(scalar, encoding)
            offset += scalar.utf8.count
            if counted > position.character { return nil }
        }
        return counted == position.character ? offset : nil
    }

    /// How many units line `line` has, for positions near its end.
    func units(ofLine line: Int, _ encoding: PositionEncoding) -> Int {
        lines[line].scalars.reduce(0) { $0 + Self.units($1, encoding) }
    }
}

/// One fuzz input: a text and requests of ranged edits to it.
func fuzzEdits(_ input: UnsafeBufferPointer<UInt8>) -> CInt {
    var reader = InputReader(bytes: input)
    let pattern = (0..<(reader.next() % 64)).map { _ in alphabet[reader.next() % alphabet.count] }.joined()
    let repeats = 1 + reader.next() % 4 * 120
    var model = ModelText(Array(String(repeating: pattern, count: repeats).utf8))
    var text = TextRope(model.bytes)
    var request = 0
    while !reader.isAtEnd, request < 64 {
        request += 1
        let encoding = PositionEncoding.allCases[reader.next() % 3]
        var edits: [TextEdit] = []
        for _ in 0..<(1 + reader.next() % 4) {
            edits.append(TextEdit(range: TextRange(start: position(&reader, model, encoding), end: position(&reader, model, encoding)),
                text: Array((0..<(reader.next() % 6)).map { _ in alphabet[reader.next() % alphabet.count] }.joined().utf8)))
        }
        let expected = modelApply(edits, to: model, encoding)
        let before = text
        do {
            let splices = try RangedEdit.place(edits, in: text, encoding: encoding)
            text = text.applying(splices)
        } catch {
            if expected != nil { fatalError("FuzzEdits: request \(request) refused (\(error)) though the model applies it: \(edits)") }
            guard text == before else { fatalError("FuzzEdits: a refused request changed the text") }
            continue
        }
        guard let expected else { fatalError("FuzzEdits: request \(request) applied though the model refuses it: \(edits)") }
        guard text.count == expected.count, text.lineCount == ModelText(expected).lines.count, text.bytes == expected else {
            fatalError("FuzzEdits: request \(request) \(edits) in \(encoding) gave other bytes than the model")
        }
        model = ModelText(expected)
    }
    return 0
}

/// A position the reader picks: mostly on a line and within it, sometimes just past it.
private func position(_ reader: inout InputReader, _ model: ModelText, _ encoding: PositionEncoding) -> TextPosition {
    let pick = reader.next() << 8 | reader.next()
    let line = pick % 97 == 0 ? model.lines.count : pick % model.lines.count
    guard line < model.lines.count else { return TextPosition(line: line, character: 0) }
    let length = model.units(ofLine: line, encoding)
    return TextPosition(line: line, character: reader.next() % (length + 2))
}

/// The model's result of a request, or nil when it must be refused.
private func modelApply(_ edits: [TextEdit], to model: ModelText, _ encoding: PositionEncoding) -> [UInt8]? {
    var placed: [(start: Int, end: Int, index: Int)] = []
    for (index, edit) in edits.enumerated() {
        guard edit.range.start <= edit.range.end,
            let start = model.offset(of: edit.range.start, encoding), let end = model.offset(of: edit.range.end, encoding)
        else { return nil }
        placed.append((start, end, index))
    }
    // Two edits overlap when some byte is inside both, or an insert falls strictly inside a range.
    for a in placed.indices {
        for b in placed.indices where b > a {
            let (x, y) = (placed[a], placed[b])
            let overlaps = x.start == x.end || y.start == y.end
                ? (x.start == x.end ? (y.start < x.start && x.start < y.end) : (x.start < y.start && y.start < x.end))
                : (x.start < y.end && y.start < x.end)
            if overlaps { return nil }
        }
    }
    // Inserts at one place keep the request's order, before a range that starts there.
    placed.sort { ($0.start, $0.start == $0.end ? 0 : 1, $0.index) < ($1.start, $1.start == $1.end ? 0 : 1, $1.index) }
    var bytes = model.bytes
    for splice in placed.reversed() { bytes.replaceSubrange(splice.start..<splice.end, with: edits[splice.index].text) }
    return bytes
}
