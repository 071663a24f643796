/// One page of a file as `read_file` shows it: numbered lines (`cat -n` style, without the "\r"
/// of a "\r\n") from line `offset`, as many as `limit` asks and a result holds, then a footer
/// that names the file, its revision and what was shown, and says how to read on when something
/// was left out.
///
/// The page's text stays within `ResultBound.bytes`. A line is cut only when it alone does not
/// fit: the page then ends inside it, and `column` (a byte of that line, counting from 1) starts
/// the next page where this one ended, so that the pages of a line put together are the line.
struct FilePage {
    var path: String
    var revision: Int
    var isDirty: Bool

    /// What `read_file` was asked for: the first line, how many lines, and where in the first line.
    struct Request {
        var offset: Int?
        var limit: Int?
        var column: Int?
    }

    /// Room for the numbered lines: the bound less what the footer may take.
    static let linesBudget = ResultBound.bytes - 1024

    /// The page of `bytes` that `request` asks for.
    ///
    /// - Throws: `ToolFailure` when `column` is below 1 or past the end of its line.
    func render(_ bytes: [UInt8], _ request: Request, budget: Int = linesBudget) throws -> String {
        // Split on the byte: Swift counts "\r\n" as one character, which is not "\n".
        var lines = bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).map { line in
            line.last == UInt8(ascii: "\r") ? line.dropLast() : line
        }
        if bytes.last == UInt8(ascii: "\n") { lines.removeLast() }
        let first = max(1, request.offset ?? 1)
        let last = min(lines.count, first + max(1, request.limit ?? 2000) - 1)
        var startByte = 0
        if let column = request.column {
            guard column >= 1 else { throw ToolFailure("`column` must be 1 or more (a byte of line \(first), counting from 1), got \(column)") }
            if first <= lines.count {
                let length = lines[first - 1].count
                guard column == 1 || column <= length else {
                    throw ToolFailure(
                        "`column` \(column) is past the end of line \(first) of \(path), which has \(length) bytes; "
                            + "read_file with offset=\(first + 1) shows the lines after it")
                }
                startByte = column - 1
            }
        }
        var out: [UInt8] = []
        var shownLast = first - 1
        var cutLine: (from: Int, to: Int, length: Int)?
        if first <= last {
            for number in first...last {
                let line = lines[number - 1]
                var from = line.startIndex
                if number == first {
                    from = ResultBound.characterStart(at: line.startIndex + startByte, in: line)
                    startByte = from - line.startIndex
                }
                let label = Array((String(repeating: " ", count: max(0, 6 - String(number).count)) + String(number) + "\t").utf8)
                let room = budget - out.count - label.count - 1
                if line.endIndex - from <= room {
                    out += label + line[from...] + [UInt8(ascii: "\n")]
                    shownLast = number
                    continue
                }
                // A line that does not fit after others starts the next page; one that does not fit alone is cut.
                guard number == first else { break }
                let end = ResultBound.characterStart(at: from + max(0, room), in: line)
                out += label + line[from..<end] + [UInt8(ascii: "\n")]
                shownLast = number
                cutLine = (from - line.startIndex + 1, end - line.startIndex, line.count)
                break
            }
        }
        let shown = Shown(count: lines.count, first: first, last: shownLast, asked: last, startByte: startByte, cut: cutLine)
        return String(decoding: out, as: UTF8.self) + footer(shown)
    }

    /// What a page showed: of `count` lines, `first` to `last` (`asked` was the last one asked
    /// for), from byte `startByte` of the first; `cut` when the first did not fit whole.
    private struct Shown {
        var count: Int
        var first: Int
        var last: Int
        var asked: Int
        var startByte: Int
        var cut: (from: Int, to: Int, length: Int)?
    }

    private func footer(_ page: Shown) -> String {
        let shown: String
        if let cut = page.cut {
            shown = "line \(page.first) of \(page.count), its bytes \(cut.from)–\(cut.to) of \(cut.length)"
        } else if page.first <= page.last {
            shown = "lines \(page.first)–\(page.last) of \(page.count)"
                + (page.startByte > 0 ? ", line \(page.first) from its byte \(page.startByte + 1)" : "")
        } else {
            shown = "no lines shown (\(page.count) in all)"
        }
        let unsaved = isDirty ? " · has unsaved edits (saved to disk shortly)" : ""
        var text = "(\(path) · revision \(revision) · \(shown)\(unsaved))"
        if let cut = page.cut {
            text += "\nThe rest of line \(page.first) (bytes \(cut.to + 1)–\(cut.length)) was left out: "
                + "a result holds at most \(ResultBound.name). read_file with offset=\(page.first) and column=\(cut.to + 1) shows what follows."
        } else if page.last < page.asked {
            text += "\nLines \(page.last + 1)–\(page.asked) were left out: a result holds at most \(ResultBound.name). "
                + "read_file with offset=\(page.last + 1) shows them."
        }
        return text
    }
}
