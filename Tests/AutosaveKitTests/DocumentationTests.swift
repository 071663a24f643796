import AutosaveKit
import Foundation
import Testing

/// The reference in `docs/` is what people read to configure the agent, read its log and write
/// clients for it. A configuration key, a log event or a socket method missing there is one nobody
/// can find; an event listed but never logged sends people looking for a line that never comes; a
/// test named as a guarantee's check that no longer exists, or a link to a file that is gone, is a
/// promise nobody keeps. Each list is read from the code (the configuration schema, the sources'
/// log calls, the server's method list), never written out here, and a failure names what is
/// missing and the document it is missing from.
@Suite struct DocumentationTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    // MARK: - Configuration keys

    @Test func everyConfigurationKeyIsInTheConfigurationDocumentWithItsAllowedValuesAndDefault() throws {
        let document = "docs/configuration.md"
        let text = try Self.text(document)
        let rows = Self.tableRows(text)
        let header = try #require(rows.first(where: { $0.first == "key" }), "\(document) has no table whose first column is `key`")
        let allowedColumn = try #require(
            header.firstIndex(where: { $0.hasPrefix("allowed") }), "\(document)'s table of keys has no `allowed values` column")
        let defaultColumn = try #require(header.firstIndex(of: "default"), "\(document)'s table of keys has no `default` column")
        var documented: [String: [String]] = [:]
        for row in rows {
            guard let key = Self.codeNames(in: row[0]).first else { continue }
            documented[key] = row
        }
        let defaults = Configuration().jsonValue
        for field in ConfigurationSchema.fields {
            guard let row = documented[field.path] else {
                Issue.record("configuration key `\(field.path)` is not in \(document)'s table of keys")
                continue
            }
            let allowed = row.indices.contains(allowedColumn) ? row[allowedColumn] : ""
            #expect(
                allowed.contains(field.allowed),
                "\(document) says `\(field.path)` may be \"\(allowed)\"; the code allows \(field.allowed)")
            let expected = try #require(Self.value(at: field.path, in: defaults), "no default for `\(field.path)` in the code")
            let written = row.indices.contains(defaultColumn) ? row[defaultColumn] : ""
            #expect(
                written.contains("`\(expected.jsonText)`"),
                "\(document) gives `\(field.path)` the default \(written); the code's is `\(expected.jsonText)`")
        }
        let keys = Set(ConfigurationSchema.fields.map(\.path))
        for key in documented.keys.sorted() where !keys.contains(key) {
            Issue.record("\(document) documents `\(key)`, which is not a configuration key")
        }
    }

    // MARK: - Log events

    @Test func everyEventTheAgentLogsIsInTheEventsDocumentAndNoOther() throws {
        let document = "docs/events.md"
        let logged = try Self.loggedEvents()
        let text = try Self.text(document)
        let documented = Set(Self.tableRows(text).flatMap { Self.codeNames(in: $0[0]) })
        #expect(logged.count > 30, "the sources' log calls were found (\(logged.count))")
        for event in logged.subtracting(documented).sorted() {
            Issue.record("event `\(event)` is logged at info or above but is not in \(document)'s table")
        }
        for event in documented.subtracting(logged).sorted() {
            Issue.record("\(document) names event `\(event)`, which the agent never logs at info or above")
        }
    }

    // MARK: - The control socket

    @Test func everySocketMethodAndNotificationHasAHeadingInTheProtocolDocument() throws {
        let document = "docs/protocol.md"
        let text = try Self.text(document)
        let headings = Set(Self.headings(in: text).flatMap { Self.codeNames(in: $0) })
        let methods = try Self.socketMethods()
        #expect(methods.count >= 10, "the server's methods were found in `enum RPCMethod` (\(methods.sorted()))")
        for method in methods.sorted() where !headings.contains(method) {
            Issue.record("socket method `\(method)` has no heading in \(document)")
        }
        // Sent as `notification(method: "event", …)`, or named by a notice type of the method table
        // (`DroppedNotice.method`).
        let notifications = try Self.matches(
            of: #"(?:notification\(\s*method:|static var method: String \{)\s*"([a-z][A-Za-z]*)""#, inSourcesUnder: "AutosaveControl")
        #expect(notifications.count >= 2, "the server's notifications were found (\(notifications.sorted()))")
        for notification in notifications.sorted() where !headings.contains(notification) {
            Issue.record("notification `\(notification)` has no heading in \(document)")
        }
    }

    @Test func everyEventNotificationErrorCodeAndRefusalIsInTheProtocolDocument() throws {
        let document = "docs/protocol.md"
        let text = try Self.text(document)
        let firstCells = Self.tableRows(text).map { $0[0] }
        let named = Set(firstCells.flatMap { Self.codeNames(in: $0) })
        // `ControlMethods.json(_: AgentEvent)` builds each notification with `object("name", …)`.
        let events = try Self.matches(of: #"\bobject\(\s*"([a-z][a-z-]*)""#, inSourcesUnder: "AutosaveControl")
        #expect(events.count >= 5, "the `event` notifications' names were found (\(events.sorted()))")
        for event in events.sorted() where !named.contains(event) {
            Issue.record("`event` notification `\(event)` is not in \(document)'s table of notifications")
        }
        let reasons = try Self.matches(of: #"member\(\s*"reason",\s*\.string\(\s*"([a-zA-Z]+)"\s*\)\s*\)"#, inSourcesUnder: "AutosaveControl")
            .subtracting(["behind"])  // `dropped`'s reason, described under its own heading
        #expect(reasons.count >= 5, "the refusals' `data.reason` values were found (\(reasons.sorted()))")
        for reason in reasons.sorted() where !named.contains(reason) {
            Issue.record("refusal reason `\(reason)` is not in \(document)'s table of reasons")
        }
        let codes = try Self.matches(of: #"code:\s*(-3\d{4})"#, inSourcesUnder: "AutosaveControl")
        #expect(codes.count >= 5, "the error codes were found (\(codes.sorted()))")
        let cells = Set(firstCells)
        for code in codes.sorted() where !cells.contains(code) {
            Issue.record("error code \(code) is not in \(document)'s table of error codes")
        }
    }

    // MARK: - Guarantees

    @Test func everyTestAndFileTheGuaranteesNameExists() throws {
        let document = "docs/guarantees.md"
        let text = try Self.text(document)
        let names = Set(Self.codeNames(in: text))
        let suites = try Self.testSuites()
        var checked = 0
        for name in names.sorted() {
            // `Suite` or `Suite.testFunction`: a name ending in `Tests`, then an identifier.
            let parts = name.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
            guard let suite = parts.first, suite.hasSuffix("Tests"), suite.first?.isUppercase == true,
                suite.allSatisfy({ $0.isLetter || $0.isNumber }),
                parts.count == 1 || (!parts[1].isEmpty && parts[1].allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" }))
            else { continue }
            checked += 1
            guard let files = suites[suite] else {
                Issue.record("\(document) names the test suite `\(suite)`, which no file in Tests/ declares")
                continue
            }
            if parts.count == 2, !files.contains(where: { $0.text.contains("func \(parts[1])(") }) {
                Issue.record("\(document) names `\(name)`, but \(suite) has no test `\(parts[1])`")
            }
        }
        #expect(checked > 50, "the tests \(document) names were found (\(checked))")
        for path in names.sorted() where Self.isRepositoryPath(path) {
            #expect(Self.exists(path), "\(document) names `\(path)`, which does not exist")
        }
    }

    // MARK: - Links

    @Test func everyRelativeLinkPointsToAFileThatExists() throws {
        let docs = try FileManager.default.contentsOfDirectory(atPath: Self.repository.appendingPathComponent("docs").path)
            .filter { $0.hasSuffix(".md") }.sorted().map { "docs/" + $0 }
        #expect(docs.count >= 6, "the documents in docs/ were found (\(docs))")
        let link = try Regex(#"\]\(([^()\s]+)\)"#)
        var checked = 0
        for document in ["README.md"] + docs {
            let text = try Self.outsideCodeBlocks(Self.text(document))
            for match in text.matches(of: link) {
                let target = String(match.output[1].substring!)
                guard !target.contains("://"), !target.hasPrefix("mailto:"), !target.hasPrefix("#") else { continue }
                let path = Self.resolve(String(target.prefix { $0 != "#" }), from: document)
                checked += 1
                #expect(Self.exists(path), "\(document) links to \(target), but \(path) does not exist")
            }
        }
        #expect(checked > 20, "the documents' relative links were found (\(checked))")
    }

    // MARK: - Reading the repository

    static func text(_ relative: String) throws -> String {
        try String(contentsOf: repository.appendingPathComponent(relative), encoding: .utf8)
    }

    /// A relative link's target as a path from the repository's top, `..` resolved.
    static func resolve(_ target: String, from document: String) -> String {
        var parts = document.split(separator: "/").dropLast().map(String.init)
        for part in target.split(separator: "/") where part != "." {
            if part == "..", !parts.isEmpty, parts.last != ".." { parts.removeLast() } else { parts.append(String(part)) }
        }
        return parts.joined(separator: "/")
    }

    static func exists(_ relative: String) -> Bool {
        FileManager.default.fileExists(atPath: repository.appendingPathComponent(relative).path)
    }

    /// A repository path as a document writes one in backticks (`soak/soak.py`, `Fuzz/Seeds/`):
    /// its first part is a folder at the top of the repository, and it has no spaces or
    /// placeholders.
    static func isRepositoryPath(_ name: String) -> Bool {
        guard let slash = name.firstIndex(of: "/"), !name.contains(where: { " <>*…".contains($0) }) else { return false }
        let top = String(name[..<slash])
        var isFolder: ObjCBool = false
        return !top.hasPrefix(".") && !top.isEmpty
            && FileManager.default.fileExists(atPath: repository.appendingPathComponent(top).path, isDirectory: &isFolder)
            && isFolder.boolValue
    }

    /// The Swift files under `Sources/<folder>` (all of `Sources/` for an empty folder), test helpers left out.
    static func sources(under folder: String = "") throws -> [(path: String, text: String)] {
        let root = repository.appendingPathComponent("Sources").appendingPathComponent(folder)
        let files = FileManager.default.enumerator(atPath: root.path)?.compactMap { $0 as? String } ?? []
        return try files.filter { $0.hasSuffix(".swift") && !$0.hasPrefix("AutosaveTestKit/") }.sorted().map {
            (path: $0, text: try String(contentsOf: root.appendingPathComponent($0), encoding: .utf8))
        }
    }

    /// The first capture of `pattern` wherever it matches in the sources under `Sources/<folder>`.
    static func matches(of pattern: String, inSourcesUnder folder: String) throws -> Set<String> {
        let regex = try Regex(pattern)
        var found: Set<String> = []
        for source in try sources(under: folder) {
            for match in source.text.matches(of: regex) {
                if let capture = match.output[1].substring { found.insert(String(capture)) }
            }
        }
        return found
    }

    /// Event names in the sources: the string literals opening a `logger.info(…)`, `.notice`,
    /// `.warning`, `.error`, `.critical` or `logger.log(level: …, …)` call (both sides of a
    /// ternary count). `debug` and `trace` lines are not shown at the default level.
    static func loggedEvents() throws -> Set<String> {
        let call = try Regex(#"logger\.(?:info|notice|warning|error|critical|log\(level:[^,]*,)\(?\s*([^()]*?)(?:,\s*metadata|\))"#)
        let literal = try Regex(#""([a-z][a-z0-9-]*)""#)
        var events: Set<String> = []
        for source in try sources() {
            for match in source.text.matches(of: call) {
                guard let head = match.output[1].substring else { continue }
                for name in head.matches(of: literal) { events.insert(String(name.output[1].substring!)) }
            }
        }
        return events
    }

    /// The methods the control server dispatches: the cases of `enum RPCMethod`, whose raw values
    /// are the method names (`ControlMethods` switches over it; any other name is refused).
    static func socketMethods() throws -> Set<String> {
        let declaration = try Regex(#"enum RPCMethod\b[^{]*\{([^}]*)\}"#)
        let caseList = try Regex(#"case\s+([^\n]+)"#)
        var methods: Set<String> = []
        for source in try sources(under: "AutosaveControl") {
            for match in source.text.matches(of: declaration) {
                guard let body = match.output[1].substring else { continue }
                for line in body.matches(of: caseList) {
                    for name in line.output[1].substring!.split(separator: ",") {
                        let method = name.trimmingCharacters(in: .whitespaces)
                        if !method.isEmpty, method.allSatisfy({ $0.isLetter }) { methods.insert(method) }
                    }
                }
            }
        }
        return methods
    }

    /// Test suites (`struct …Tests`, `class …Tests`) and the files that declare or extend them.
    static func testSuites() throws -> [String: [(path: String, text: String)]] {
        let declaration = try Regex(#"(?:struct|class|enum|extension)\s+([A-Z]\w*Tests)\b"#)
        let root = repository.appendingPathComponent("Tests")
        let files = FileManager.default.enumerator(atPath: root.path)?.compactMap { $0 as? String } ?? []
        var suites: [String: [(path: String, text: String)]] = [:]
        for file in files.sorted() where file.hasSuffix(".swift") {
            let text = try String(contentsOf: root.appendingPathComponent(file), encoding: .utf8)
            for name in Set(text.matches(of: declaration).map { String($0.output[1].substring!) }) {
                suites[name, default: []].append((path: file, text: text))
            }
        }
        return suites
    }

    // MARK: - Reading Markdown

    /// The text with fenced code blocks left out (their lines are examples, not links or tables).
    static func outsideCodeBlocks(_ markdown: String) -> String {
        var inFence = false
        var kept: [Substring] = []
        for line in markdown.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.trimmingCharacters(in: .whitespaces).hasPrefix("```") {
                inFence.toggle()
                continue
            }
            if !inFence { kept.append(line) }
        }
        return kept.joined(separator: "\n")
    }

    /// Every table row, as its cells without the outer pipes, trimmed; `\|` inside a cell stays.
    static func tableRows(_ markdown: String) -> [[String]] {
        outsideCodeBlocks(markdown).split(separator: "\n").compactMap { line -> [String]? in
            guard line.hasPrefix("|") else { return nil }
            let cells = line.replacingOccurrences(of: #"\|"#, with: "\u{0}").split(separator: "|", omittingEmptySubsequences: false)
                .dropFirst().dropLast()
                .map { $0.replacingOccurrences(of: "\u{0}", with: "|").trimmingCharacters(in: .whitespaces) }
            guard let first = cells.first, !first.allSatisfy({ $0 == "-" || $0 == ":" }) else { return nil }
            return Array(cells)
        }
    }

    /// The heading lines (`#`, `##`, …) outside code blocks.
    static func headings(in markdown: String) -> [String] {
        outsideCodeBlocks(markdown).split(separator: "\n").filter { $0.hasPrefix("#") }.map(String.init)
    }

    /// The names written in backticks (`name`) in `text`.
    static func codeNames(in text: some StringProtocol) -> [String] {
        var names: [String] = []
        var current: String?
        for character in text {
            if character == "`" {
                if let name = current, !name.isEmpty { names.append(name) }
                current = current == nil ? "" : nil
            } else if current != nil {
                current!.append(character)
            }
        }
        return names
    }

    /// The value at a dotted path (`autosave.delayMs`) of a JSON object.
    static func value(at path: String, in json: JSONValue) -> JSONValue? {
        var current = json
        for part in path.split(separator: ".") {
            guard case .object(let members) = current, let member = members.first(where: { $0.key == part }) else { return nil }
            current = member.value
        }
        return current
    }
}
