import Foundation
import Testing

/// The documents and the code speak of the product, and name a measurement by the commit and the
/// date it was made: "before issue 20" or "stop 31's run" means nothing to someone who reads the
/// repository without the project's tracker, and a helper's "session" is no product's. These
/// tests read every text file of the folders people read (README.md, docs/, bench/, Sources/,
/// Benchmarks/) and fail naming the file, the line and the words. The words looked for are
/// precise enough to leave the product's own alone: an MCP session, `TreeSession`, "stop the
/// agent", a stop deadline, "issue a request", a link to another project's issue.
extension DocumentationTests {
    /// Where people read about the product: a file, or a folder read through.
    static let productTexts = ["README.md", "docs", "bench", "Sources", "Benchmarks"]

    /// Files read in those folders: text by extension, and scripts without one (`bench/compare`).
    static let textExtensions: Set<String> = [
        "md", "py", "c", "h", "sh", "swift", "modulemap", "txt", "lua", "json", "toml", "yml", "yaml",
    ]

    /// Words that speak of the project's development rather than the product, in any case. "This
    /// session" is not among them: a coding agent's MCP session is the product's.
    static let developmentPatterns = [
        #"\bissues?\s+#?\d+"#,  // an issue by number: "before issue 20", "(issue 5)", "Issue #12"
        #"\bstops?\s+\d+"#,  // a stop by number: "stop 31's probe batches", "stops 30 and 31"
        #"\bhelper\s+sessions?\b"#,  // "a helper session testing beside it"
        #"\bsessions?\s+#?\d+"#,  // a session by number
        #"\b(?:last|previous|next|earlier)\s+sessions?\b"#,  // "the last session's run"
    ]

    static func developmentWords() throws -> Regex<AnyRegexOutput> {
        try Regex(developmentPatterns.joined(separator: "|")).ignoresCase().wordBoundaryKind(.simple)
    }

    @Test func theWordsLookedForAreTheDevelopmentsAndNotTheProducts() throws {
        let words = try Self.developmentWords()
        let development = [
            "132 MB before issue 20", "1.33 × before stop 31's probe batches", "(issue 5)", "Issue #12: the walls",
            "a helper session testing beside it", "Stop 30's other two runs", "in session 3", "the last session's run",
            "stops 30 and 31",
        ]
        for text in development {
            #expect(
                text.firstMatch(of: words) != nil, "\"\(text)\" speaks of the project's development but is not found")
        }
        let product = [
            "an MCP session", "this session wrote", "TreeSession", "stop the agent", "a stop deadline", "StopDeadline",
            "the agent stops at the first torn record", "issue a request",
            "(https://github.com/inotify-tools/inotify-tools/issues/240)",
            "`theHolesOfIssue32StayClosed`", "A complete session — the agent in one shell", "stopTimeoutMs 10000",
        ]
        for text in product {
            #expect(
                text.firstMatch(of: words) == nil,
                "\"\(text)\" is the product's own words but is taken for the development's")
        }
    }

    @Test func theDocumentsAndTheCodeNameNoIssueStopOrSession() throws {
        let words = try Self.developmentWords()
        let files = Self.productTextFiles()
        #expect(
            files.contains("README.md") && files.contains("bench/results.md") && files.contains("bench/compare"),
            "README.md, bench/results.md and bench/compare were among the files read (\(files.count) files)")
        #expect(files.count > 200, "the text files of \(Self.productTexts) were found (\(files.count))")
        for file in files {
            let text = try Self.text(file)
            for match in text.matches(of: words) {
                let line = text[..<match.range.lowerBound].reduce(1) { $1 == "\n" ? $0 + 1 : $0 }
                let found = text[match.range].replacingOccurrences(of: "\n", with: " ")
                Issue.record(
                    "\(file):\(line) says \"\(found)\", which names the project's development, not the product: name a run by its commit and date, or say what the thing is"
                )
            }
        }
    }

    /// The text files of `productTexts`, as paths from the repository's top, sorted; hidden
    /// entries and build folders left out.
    static func productTextFiles() -> [String] {
        let manager = FileManager.default
        var files: [String] = []
        for top in productTexts {
            var isFolder: ObjCBool = false
            guard manager.fileExists(atPath: repository.appendingPathComponent(top).path, isDirectory: &isFolder) else {
                continue
            }
            guard isFolder.boolValue else {
                files.append(top)
                continue
            }
            let folder = repository.appendingPathComponent(top)
            let found = manager.enumerator(atPath: folder.path)?.compactMap { $0 as? String } ?? []
            for relative in found {
                let parts = relative.split(separator: "/")
                guard !parts.contains(where: { $0.hasPrefix(".") || $0 == "__pycache__" }) else { continue }
                let path = top + "/" + relative
                var entryIsFolder: ObjCBool = false
                guard
                    manager.fileExists(
                        atPath: repository.appendingPathComponent(path).path, isDirectory: &entryIsFolder),
                    !entryIsFolder.boolValue
                else { continue }
                let name = String(parts.last ?? "")
                if let dot = name.lastIndex(of: ".") {
                    if textExtensions.contains(String(name[name.index(after: dot)...])) { files.append(path) }
                } else if isScript(path) {
                    files.append(path)
                }
            }
        }
        return files.sorted()
    }

    /// Whether a file without an extension is a script (`#!` first), so text to read.
    static func isScript(_ relative: String) -> Bool {
        guard let handle = FileHandle(forReadingAtPath: repository.appendingPathComponent(relative).path) else {
            return false
        }
        defer { try? handle.close() }
        return (try? handle.read(upToCount: 2)) == Data("#!".utf8)
    }
}
