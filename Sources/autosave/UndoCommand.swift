import ArgumentParser
import AutosaveControl
import AutosaveKit

/// `autosave undo --who WRITER [--since TIME] [--dry-run] [PATH…]`: one writer's changes taken
/// back, everyone else's kept.
struct UndoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "undo",
        abstract: "Take back what one writer changed (since TIME), keeping what everyone else wrote meanwhile.",
        discussion: """
            Each of WRITER's versions is reversed, newest first, by a three-way merge onto the file as it is now: \
            later edits by others stay. A file WRITER made is removed if nobody changed it since; one WRITER removed \
            comes back. Where taking a change back overlaps someone's later edit of the same lines, that file is left \
            as it is, a conflict copy holds it as it was before WRITER's first change, and the command names it \
            (exit 1). The undo is itself a version, by `undo`, and can be undone: `autosave undo --who undo`.

            WRITER as `autosave history` names it: cli, nvim:41 (or nvim for every Neovim), mcp:NAME, external, \
            external:sed (outside changes by a program the agent saw writing). TIME as in PATH@TIME: 20m, \
            "2 hours ago", 2026-11-27T10:00.
            """)
    @OptionGroup var client: ClientOptions
    @Option(name: .long, help: "The writer whose changes to take back.") var who: String
    @Option(name: .long, help: "Only its changes from then on (20m, \"2 hours ago\", 2026-11-27T10:00).") var since: String?
    @Flag(name: .long, help: "Change nothing: print the unified diff of what would change (`autosave patch` applies it).")
    var dryRun = false
    @Argument(help: "Files or folders (default: the whole tree).", completion: .file()) var paths: [String] = []

    func run() async throws {
        var moment: Int64?
        if let since {
            // A time only: an id or -N read by the same parser is no moment.
            guard case .time(let milliseconds)? = try? VersionSelector.parse(since, now: VersionHistory.wallClock()) else {
                throw ValidationError("--since takes a time (20m, \"2 hours ago\", 2026-11-27T10:00), not \(since); nothing was undone")
            }
            moment = milliseconds
        }
        var collided = 0
        var undone = 0
        var leftAlone = 0
        for path in paths.isEmpty ? [""] : paths.map(ClientOptions.absolute) {
            let answer = try await client.call(UndoMethod(who: who, since: moment, path: path, isDryRun: dryRun))
            for file in answer.files {
                switch file.action {
                case .collided:
                    collided += 1
                    let copy = file.copy.map { "; \($0) holds it as it was before \(who)'s first change" } ?? ""
                    printError("not undone: \(file.path): taking \(who)'s change back overlaps a later edit; the file is left as it is\(copy)")
                case .written, .removed, .movedBack:
                    undone += 1
                    if dryRun {
                        StandardOutput.write(Array((file.diff ?? "").utf8))
                    } else {
                        let versions = file.versions.map(String.init).joined(separator: ", ")
                        let what = file.action == .removed ? "removed" : file.action == .movedBack ? "moved back from \(file.from ?? "?") to" : "undone"
                        print("\(what) \(file.path) (version\(file.versions.count == 1 ? "" : "s") \(versions))")
                    }
                }
            }
            for skip in answer.skipped { printError("left alone: \(skip.path)@\(skip.version): \(skip.reason)") }
            leftAlone += answer.skipped.count
        }
        if undone == 0 && collided == 0 && leftAlone == 0 {
            printError("nothing to undo: no file holds a change by \(who)\(since.map { " since \($0)" } ?? "") that is not taken back already")
        }
        if collided > 0 { throw ExitStatus.failure }
    }
}
