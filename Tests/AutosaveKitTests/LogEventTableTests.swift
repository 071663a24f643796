import Foundation
import Testing

/// README's table of log events is the user's reference for reading the log: every event the
/// agent can log at `info` or above is in it, and it names no event the agent never logs.
@Suite struct LogEventTableTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    /// Event names in the sources: the string literals opening a `logger.info(…)`, `.notice`,
    /// `.warning`, `.error`, `.critical` or `logger.log(level: …, …)` call (both sides of a
    /// ternary count). `debug` and `trace` lines are not shown at the default level.
    static func loggedEvents() throws -> Set<String> {
        let call = try Regex(#"logger\.(?:info|notice|warning|error|critical|log\(level:[^,]*,)\(?\s*([^()]*?)(?:,\s*metadata|\))"#)
        let literal = try Regex(#""([a-z][a-z0-9-]*)""#)
        var events: Set<String> = []
        let sources = repository.appendingPathComponent("Sources")
        let files = FileManager.default.enumerator(atPath: sources.path)?.compactMap { $0 as? String } ?? []
        for file in files where file.hasSuffix(".swift") && !file.hasPrefix("AutosaveTestKit/") {
            let text = try String(contentsOf: sources.appendingPathComponent(file), encoding: .utf8)
            for match in text.matches(of: call) {
                guard let head = match.output[1].substring else { continue }
                for name in head.matches(of: literal) { events.insert(String(name.output[1].substring!)) }
            }
        }
        return events
    }

    /// Names in the first column of the table under README's "## The log".
    static func documentedEvents() throws -> Set<String> {
        let readme = try String(contentsOf: repository.appendingPathComponent("README.md"), encoding: .utf8)
        guard let section = readme.range(of: "## The log") else { return [] }
        let rest = readme[section.upperBound...]
        let end = rest.range(of: "\n## ")?.lowerBound ?? rest.endIndex
        let name = try Regex(#"`([a-z][a-z0-9-]*)`"#)
        var events: Set<String> = []
        for line in rest[..<end].split(separator: "\n") where line.hasPrefix("| `") {
            let firstColumn = line.dropFirst().prefix { $0 != "|" }
            for match in firstColumn.matches(of: name) { events.insert(String(match.output[1].substring!)) }
        }
        return events
    }

    @Test func everyEventTheAgentLogsIsInTheReadmeTable() throws {
        let logged = try Self.loggedEvents()
        let documented = try Self.documentedEvents()
        #expect(logged.count > 30, "the sources' log calls were found (\(logged.count))")
        #expect(logged.subtracting(documented).sorted() == [], "logged but not in README's table")
        #expect(documented.subtracting(logged).sorted() == [], "in README's table but never logged")
    }
}
