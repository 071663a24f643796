import ArgumentParser
import AutosaveControl
import AutosaveKit
import FoundationEssentials
import Synchronization

/// `autosave write PATH`: replaces a buffer's content (stdin, or `--from FILE`).
struct WriteCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "write", abstract: "Replace PATH's buffer with stdin (or --from FILE); prints {path, revision}.")
    @OptionGroup var client: ClientOptions
    @Argument(help: "The file to write.") var path: String
    @Option(name: .long, help: "Read the content from FILE instead of stdin.") var from: String?
    @Option(name: .long, help: "Refuse unless the buffer is at this revision.") var ifRevision: Int?
    @Flag(name: .long, help: "Make PATH's missing folders (inside the root) instead of refusing the write.") var parents = false

    func run() async throws {
        let content: RequestContent
        do {
            content = try from.map { try RequestContent.read(path: ClientOptions.absolute($0)) } ?? RequestContent.readStandardInput()
        } catch {
            printError("cannot read \(from ?? "stdin"): \(error)")
            throw ExitStatus.failure
        }
        let request = WriteMethod(
            path: ClientOptions.absolute(path), content: .raw(bytes: nil),
            change: ChangeParams(changeID: UUID(), ifRevision: ifRevision, client: "cli"), createParents: parents)
        // Raw bytes after the request line: no escaping, no base64, whatever the content.
        print(try await client.call(request, content: content).result.json.jsonText)
    }
}

/// `autosave cat PATH`: the buffer's bytes, raw.
struct CatCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cat", abstract: "Print PATH's buffer, byte for byte (exit status 1 when there is no such file).")
    @OptionGroup var client: ClientOptions
    @Argument var path: String

    func run() async throws {
        let answer = try await client.call(ReadMethod(path: ClientOptions.absolute(path), isRaw: true), content: nil)
        guard let content = answer.content else {
            // As cat(1) does: a file that is not there (nor an edit that makes it) is an error.
            printError("\(answer.result.path) does not exist (no file, and no buffer that makes it)")
            throw ExitStatus.failure
        }
        StandardOutput.write(content)
    }
}

/// `autosave save [PATH…|--all]`: saves now; returns once durable.
struct SaveCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "save", abstract: "Save buffers now (all when no PATH); returns once durable.")
    @OptionGroup var client: ClientOptions
    @Argument var paths: [String] = []
    @Flag(name: .long, help: "Save every dirty buffer.") var all = false

    func run() async throws {
        _ = try await client.call(SaveMethod(all || paths.isEmpty ? .all : .paths(paths.map(ClientOptions.absolute))))
    }
}

/// `autosave status [--json]`: the open buffers.
struct StatusCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "status", abstract: "Show open buffers: dirty state, revision, next save.")
    @OptionGroup var client: ClientOptions
    @Flag(name: .long, help: "Print JSON.") var json = false

    func run() async throws {
        let result = try await client.call(StatusMethod())
        if json {
            print(result.json.jsonText)
            return
        }
        print("root \(result.root)")
        for case .object(let fields) in result.buffers.map(\.json) {
            print(fields.map { "\($0.key)=\($0.value.jsonText)" }.joined(separator: " "))
        }
    }
}

/// `autosave sync`: returns once every external change made before it reached its buffer.
struct SyncCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "sync", abstract: "Wait until every earlier external change reached its buffer.")
    @OptionGroup var client: ClientOptions
    func run() async throws { _ = try await client.call(SyncMethod()) }
}

/// `autosave stop`: the agent saves everything and exits; exit status 1 when an edit could be
/// put on disk nowhere (the agent names its journal record in its log).
struct StopCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stop", abstract: "Stop the agent (it saves every dirty buffer first).",
        discussion: "An edit that cannot be saved at its path is saved as a conflict copy (named on stderr); exit status 1 when even that failed.")
    @OptionGroup var client: ClientOptions

    func run() async throws {
        let outcome = try await client.call(ShutdownMethod()).outcome
        for copied in outcome.copied {
            printError("\(copied.path) could not be saved at its path; its unsaved edit is in \(copied.copy)")
        }
        let lost = outcome.lost
        for path in lost {
            printError("\(path): the unsaved edit is on disk nowhere (not saved, no conflict copy); it is in the agent's journal only, see its log")
        }
        if !lost.isEmpty { throw ExitStatus.failure }
    }
}

/// `autosave open|close|rm PATH`.
struct OpenCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "open", abstract: "Open PATH in a buffer; prints its status.")
    @OptionGroup var client: ClientOptions
    @Argument var path: String
    func run() async throws { print(try await client.call(OpenMethod(path: ClientOptions.absolute(path))).json.jsonText) }
}

struct CloseCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "close", abstract: "Save PATH if dirty and close its buffer.")
    @OptionGroup var client: ClientOptions
    @Argument var path: String
    func run() async throws { _ = try await client.call(CloseMethod(path: ClientOptions.absolute(path))) }
}

struct RemoveCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "rm", abstract: "Delete PATH, after every edit queued before it.")
    @OptionGroup var client: ClientOptions
    @Argument var path: String
    func run() async throws {
        print(try await client.call(RemoveMethod(path: ClientOptions.absolute(path), change: ChangeParams(client: "cli"))).json.jsonText)
    }
}

/// `autosave events`: every event as a JSON line, until interrupted.
struct EventsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "events",
        abstract: "Print every agent event as a JSON line until interrupted (the first line, {\"subscribed\":true}, says it is listening).")
    @OptionGroup var client: ClientOptions
    func run() async throws {
        let connection = try await client.connect()
        let dropped = Mutex<JSONValue?>(nil)
        try await connection.subscribe { method, value in
            guard method != DroppedNotice.method else { return dropped.withLock { $0 = value } }
            StandardOutput.write(Array((value.jsonText + "\n").utf8))
        }
        if let notice = dropped.withLock({ $0 }) {
            let missed = (try? DroppedNotice(json: notice)).map { String($0.missed) } ?? "?"
            printError("the agent let this subscription go: it fell behind and missed \(missed) events; run `autosave events` again to go on")
            throw ExitStatus.failure
        }
    }
}
