import ArgumentParser
import AutosaveControl
import AutosaveHistory
import AutosaveKit
import FoundationEssentials
import Glibc

/// `autosave history [PATH]`: the versions history keeps of a file, or of the files below a folder.
struct HistoryCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "history",
        abstract: "List the versions of PATH (a file, followed across moves, or a folder), newest first.",
        discussion:
            "Each line: version id, time (local, and how long ago), who wrote it, kind, size, lines added and removed against the version before (+3 -1, when known), path. `autosave show PATH@V` prints one, `autosave diff PATH@A [PATH@B]` compares two.")
    @OptionGroup var client: ClientOptions
    @Argument(help: "A file or folder (default: the whole tree).") var path: String?
    @Flag(name: .long, help: "Print a JSON array of versions.") var json = false
    @Flag(name: .long, help: "List removed files that can be brought back (`autosave restore PATH@-0`).") var deleted = false
    @Option(name: .long, help: "At most N versions.") var limit: Int?
    @Flag(name: .long, help: "Remove every version of PATH (a file or folder) from history, and their bytes from its database.")
    var forget = false

    func validate() throws {
        if let limit, limit < 1 { throw ValidationError("--limit must be at least 1, got \(limit)") }
        if forget, path == nil { throw ValidationError("--forget needs the PATH whose versions to remove") }
        if forget, deleted || limit != nil { throw ValidationError("--forget takes no --deleted or --limit") }
    }

    func run() async throws {
        if forget, let path { return try await forgetVersions(of: path) }
        // As rows: half the bytes of objects for the agent to write and this to read; `--json`
        // prints objects made here, as it always did.
        let request = HistoryMethod(path: path.map(ClientOptions.absolute) ?? "", limit: limit, isDeletedOnly: deleted, form: .rows)
        let versions = try await client.call(request).versions
        if json {
            var writer = JSONWriter(capacity: versions.count * 192)
            Version.write(versions, to: &writer)
            writer.raw("\n")
            StandardOutput.write(writer.takeBytes())
            return
        }
        let now = VersionHistory.wallClock()
        var clock = LocalClock()
        // Written in steps of 64 KiB from one buffer: a megabyte of lines held whole was a page
        // fault per 4 KiB of them.
        var text = TextBytes(capacity: 1 << 16 + 4096)
        for version in versions {
            VersionLine.append(version, now: now, clock: &clock, to: &text)
            if text.count >= 1 << 16 {
                text.withUnsafeBytes(StandardOutput.write)
                text.removeAll()
            }
        }
        text.withUnsafeBytes(StandardOutput.write)
    }
}

extension HistoryCommand {
    /// `--forget PATH`: one line saying what went, or the result as JSON.
    func forgetVersions(of path: String) async throws {
        let result = try await client.call(ForgetMethod(path: ClientOptions.absolute(path)))
        if json {
            print(result.json.jsonText)
            return
        }
        var line = "forgot \(result.versions) version\(result.versions == 1 ? "" : "s") of \(result.path)"
        if result.sharedContents > 0 {
            line += "; \(result.sharedContents) of their contents stay, as other paths hold the same bytes"
        }
        print(line)
    }
}

/// `autosave show PATH@V`: a version's bytes.
struct ShowCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "show",
        abstract: "Print version V of PATH byte for byte (V: an id from `autosave history`, -N: N versions before the latest, or a time).",
        discussion: VersionArgument.forms)
    @OptionGroup var client: ClientOptions
    @Argument(help: VersionArgument.help, completion: .file(), transform: VersionArgument.init(parsing:)) var version: VersionArgument

    func run() async throws {
        // The bytes go to standard output as they come off the socket, over a plain blocking
        // connection: a 1 MB version is never held whole, and no event loop is started.
        let request = ShowMethod(path: ClientOptions.absolute(version.path), version: version.selector, isRaw: true)
        let answer = try client.call(request, streamingContentTo: StandardOutput.write)
        guard answer.contentBytes != nil else {
            printError("version \(answer.result.version.id) of \(answer.result.version.path) is its removal: it holds no content (`autosave show \(version.path)@-1` is what it removed)")
            throw ExitStatus.failure
        }
    }
}

/// `autosave restore PATH@V [--to NEWPATH]`: a version written back, as an edit.
struct RestoreCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "restore",
        abstract: "Write version V of PATH back (or to --to NEWPATH), as an edit: merged with unsaved edits, saved, and itself a new version.",
        discussion: VersionArgument.forms + "\n\n`autosave restore --deleted DIR` brings back every file removed below DIR, each as it was when removed.")
    @OptionGroup var client: ClientOptions
    @Argument(help: VersionArgument.help, completion: .file(), transform: VersionArgument.init(parsing:)) var version: VersionArgument?
    @Option(name: .long, help: "Write it to NEWPATH instead (its folders are made).") var to: String?
    @Option(name: .long, help: "Bring back every file removed below DIR (`autosave history --deleted DIR` lists them).")
    var deleted: String?

    func validate() throws {
        switch (version, deleted) {
        case (nil, nil): throw ValidationError("give PATH@V, or --deleted DIR")
        case (.some, .some): throw ValidationError("give PATH@V or --deleted DIR, not both")
        case (nil, .some) where to != nil: throw ValidationError("--to goes with PATH@V, not with --deleted")
        default: break
        }
    }

    func run() async throws {
        if let deleted {
            // `DIR/` as a shell completes it names the folder: `absolute` drops the slash.
            let folder = ClientOptions.absolute(deleted)
            let answer = try await client.call(RestoreDeletedMethod(path: folder))
            guard !answer.files.isEmpty || !answer.refused.isEmpty else {
                printError("nothing to bring back: no file removed below \(deleted) is in history (`autosave history --deleted \(deleted)`)")
                throw ExitStatus.failure
            }
            for file in answer.files { print(file.json.jsonText) }
            for refusal in answer.refused { printError("not brought back: \(refusal.path): \(refusal.reason)") }
            if !answer.refused.isEmpty { throw ExitStatus.failure }
            return
        }
        guard let version else { return }
        let request = RestoreMethod(path: ClientOptions.absolute(version.path), version: version.selector, to: to.map(ClientOptions.absolute))
        print(try await client.call(request).json.jsonText)
    }
}

/// `PATH@V` on the command line.
struct VersionArgument: Sendable {
    var path: String
    var selector: VersionSelector

    static let help = ArgumentHelp("PATH@V, such as notes.txt@12, notes.txt@-1 or notes.txt@\"10 minutes ago\".")
    static let forms = """
        V is a version id (notes.txt@12), -N for N versions before the latest (notes.txt@-1: before the last change), \
        or a time: the version the file held then, its latest at or before it (following moves). A time is a time ago \
        (@"10 minutes ago", @10m, @2h, @3d, @1w) or a local date and time (@2026-11-27 for midnight, @2026-11-27T10:00, \
        @2026-11-27T10:00:00), or RFC 3339 with Z or an offset (@2026-11-27T09:00:00Z).
        """

    /// Reads `PATH@V`; a time ago counts back from now, on this machine's clock.
    ///
    /// - Throws: `VersionSelectorError` naming the text, for one without `@V` or with a `V` that is no version.
    init(parsing argument: String) throws(VersionSelectorError) {
        // The last `@` splits: a file name may hold one.
        guard let at = argument.lastIndex(of: "@"), at != argument.startIndex else {
            throw VersionSelectorError(text: argument, problem: "it has no @V after the path (PATH@V, such as notes.txt@-1)")
        }
        path = String(argument[..<at])
        selector = try VersionSelector.parse(argument[argument.index(after: at)...], now: VersionHistory.wallClock())
    }
}
