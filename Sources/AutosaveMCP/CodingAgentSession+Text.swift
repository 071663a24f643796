import AutosaveKit

/// Reading texts as the agent and a model name their places: LSP positions,
/// line numbers and the lines two versions differ on.
extension CodingAgentSession {
    /// The LSP position (line, UTF-8 character) of byte `offset`, with line breaks counted as the
    /// agent counts them: "\n", "\r\n" and a lone "\r".
    static func position(of offset: Int, in text: [UInt8]) -> TextPosition {
        var line = 0
        var lineStart = 0
        var index = 0
        while index < offset {
            let byte = text[index]
            if byte == UInt8(ascii: "\n") || (byte == UInt8(ascii: "\r") && (index + 1 >= text.count || text[index + 1] != UInt8(ascii: "\n"))) {
                line += 1
                lineStart = index + 1
            }
            index += 1
        }
        return TextPosition(line: line, character: offset - lineStart)
    }

    /// "line 4" or "lines 4–6, 18": where the replaced ranges are.
    static func lines(of ranges: [Range<Int>], in text: [UInt8]) -> String {
        let spans = ranges.map { range -> String in
            let first = ExactReplacement.lineNumber(at: range.lowerBound, in: text)
            let last = ExactReplacement.lineNumber(at: max(range.lowerBound, range.upperBound - 1), in: text)
            return first == last ? "\(first)" : "\(first)–\(last)"
        }
        return (spans.count == 1 && !spans[0].contains("–") ? "line " : "lines ") + spans.joined(separator: ", ")
    }

    /// Where `after` differs from `before`, in `before`'s lines: the lines between their common
    /// first and last lines.
    static func changedLines(from before: [UInt8], to after: [UInt8]) -> String {
        let a = before.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
        let b = after.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
        var prefix = 0
        while prefix < min(a.count, b.count), a[prefix].elementsEqual(b[prefix]) { prefix += 1 }
        var suffix = 0
        while suffix < min(a.count, b.count) - prefix, a[a.count - 1 - suffix].elementsEqual(b[b.count - 1 - suffix]) { suffix += 1 }
        let first = prefix + 1
        let last = a.count - suffix
        if last < first { return "lines added after line \(prefix)" }
        return first == last ? "line \(first) changed" : "lines \(first)–\(last) changed"
    }

    /// A line as a message quotes it: its first 500 bytes, and how long it is when that is not all.
    static func excerpt(_ line: String) -> String {
        let bytes = Array(line.utf8)
        guard bytes.count > 500 else { return line }
        let end = ResultBound.characterStart(at: 500, in: bytes)
        return String(decoding: bytes[..<end], as: UTF8.self) + "… (the line goes on: \(bytes.count) bytes in all)"
    }

    /// What a model reads when its replacement could not be placed.
    static func describe(_ failure: ExactReplacement.Failure, path: String, revision: Int) -> String {
        switch failure {
        case .emptyOldString:
            return "`old_string` is empty; give the text to replace (write_file writes a whole file)"
        case .noChange:
            return "`old_string` and `new_string` are the same; nothing to change"
        case .notFound(let line?, let text?):
            return "`old_string` was not found in \(path) (revision \(revision)). The nearest text is line \(line):\n\(line)\t\(excerpt(text))\nread_file it and copy the text exactly, whitespace included; nothing was changed"
        case .notFound:
            return "`old_string` was not found in \(path) (revision \(revision)); read_file it and copy the text exactly; nothing was changed"
        case .ambiguous(let lines):
            return "`old_string` occurs \(lines.count) times in \(path) (lines \(lines.map(String.init).joined(separator: ", "))); include more of the lines around it to make it unique, or set replace_all; nothing was changed"
        }
    }
}
