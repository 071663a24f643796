import ArgumentParser
import AutosaveControl
import AutosaveKit
import FoundationEssentials

/// `autosave changes [--since TOKEN] [--glob G]… [--json]`: what changed in the tree since a clock.
struct ChangesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "changes",
        abstract: "Print the paths changed since --since TOKEN (a kind and a path a line), then the clock to pass next time.",
        discussion: """
            Without --since, or with a clock the agent cannot answer exactly (another agent run's, or \
            one from before lost events), it prints `fresh` and the clock: look at everything yourself, \
            then ask with that clock. Folders end in `/`.
            """)
    @OptionGroup var client: ClientOptions
    @Option(name: .long, help: "The clock a previous call printed.") var since: String?
    @Option(name: .long, help: "Only paths matching this glob (LSP syntax: **, *, ?, {a,b}, [a-z]); may be repeated.")
    var glob: [String] = []
    @Flag(name: .long, help: "Print the answer as JSON: {root, clock, changes: [{path, kind, from?}], fresh}.") var json = false

    func run() async throws {
        let result = try await client.call(ChangesMethod(filter: ChangeFilter(since: since, globs: glob)))
        if json {
            print(result.json.jsonText)
            return
        }
        let answer = result.answer
        var lines = answer.changes.map { change in
            "\(change.kind.rawValue) \(change.path)" + (change.from.map { " (from \($0))" } ?? "")
        }
        if answer.isFresh { lines.append("fresh") }
        lines.append("clock \(answer.clock)")
        print(lines.joined(separator: "\n"))
    }
}
