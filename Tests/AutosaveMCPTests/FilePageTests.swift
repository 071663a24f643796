@testable import AutosaveMCP
import Foundation
import Testing

/// `read_file`'s pages (issue 33, item 8): within the bound, a long line read in parts that put
/// together are the line, never cut inside a character.
@Suite struct FilePageTests {
    let page = FilePage(path: "min.js", revision: 3, isDirty: false)

    /// The parts of line 1 `read_file` shows with `budget`, page after page.
    func parts(of text: String, budget: Int) throws -> (parts: [String], pages: [String]) {
        var parts: [String] = []
        var pages: [String] = []
        var column: Int?
        while true {
            let shown = try page.render(Array(text.utf8), FilePage.Request(offset: 1, limit: 1, column: column), budget: budget)
            pages.append(shown)
            let line = shown.prefix { $0 != "\n" }
            parts.append(String(line.dropFirst("     1\t".count)))
            guard let next = shown.range(of: "and column=") else { return (parts, pages) }
            column = Int(shown[next.upperBound...].prefix { $0.isNumber })
        }
    }

    @Test func theBoundIsAQuarterMegabyteAndEveryResultKeepsToIt() {
        #expect(ResultBound.bytes == 262_144)
        let long = String(repeating: "é", count: 200_000)
        let cut = ResultBound.cut(long)
        #expect(cut.utf8.count <= ResultBound.bytes)
        #expect(cut.hasSuffix("so its last \(400_000 - (cut.utf8.count - cut.split(separator: "\n").last!.utf8.count - 1)) bytes were left out]"))
        #expect(ResultBound.cut("short") == "short")
    }

    @Test func aLongLineIsReadInPartsThatMakeTheLine() throws {
        let line = (0..<300).map { "v\($0)='é😀';" }.joined()
        let (parts, pages) = try parts(of: line + "\n", budget: 64)
        #expect(parts.joined() == line)
        #expect(parts.count > 10)
        for shown in pages { #expect(shown.prefix { $0 != "\n" }.utf8.count <= 64) }
        #expect(pages[0].contains("(min.js · revision 3 · line 1 of 1, its bytes 1–"))
        #expect(pages.last!.contains("lines 1–1 of 1, line 1 from its byte "))
    }

    @Test func aLineThatDoesNotFitAfterOthersStartsTheNextPage() throws {
        let text = "short\n" + String(repeating: "x", count: 100) + "\nlast\n"
        let shown = try page.render(Array(text.utf8), FilePage.Request(), budget: 64)
        #expect(shown.hasPrefix("     1\tshort\n("))
        #expect(shown.hasSuffix("Lines 2–3 were left out: a result holds at most 256 KB. read_file with offset=2 shows them."))
    }

    @Test func aColumnPastTheEndOfItsLineIsRefusedSayingWhere() {
        #expect(throws: ToolFailure.self) { try page.render(Array("abc\n".utf8), FilePage.Request(offset: 1, column: 9)) }
        #expect(throws: ToolFailure.self) { try page.render(Array("abc\n".utf8), FilePage.Request(column: 0)) }
        #expect((try? page.render(Array("\n".utf8), FilePage.Request(column: 1))) == "     1\t\n(min.js · revision 3 · lines 1–1 of 1)")
    }
}
