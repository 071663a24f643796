import ArgumentParser
import AutosaveControl
import AutosaveHistory
import AutosaveKit
import Glibc

/// `autosave diff PATH@A [PATH@B]`: a unified diff between two versions, or between a version and
/// the file as the agent serves it now.
///
/// The diff is made here, from two `show` answers (or a `show` and a `read`), not by a socket
/// method of its own: the agent hands out bytes it already hands out, spends no time on a diff a
/// client asked for, and the protocol stays as it is; the client has the same line diff the
/// agent merges with (`LineMerge`'s Myers), and writes what `diff -u` writes.
struct DiffCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "diff",
        abstract:
            "Show what changed from version A of PATH to version B, or to the file now (its buffer, else the disk), as a unified diff.",
        discussion: VersionArgument.forms + """


            Exit status as diff's: 0 when they are the same, 1 when they differ, 2 on trouble (3 when no agent runs, \
            4 when it is another user's). Binary contents (a NUL among the first 8000 bytes) are not shown: \
            "Binary versions … differ".
            """)
    @OptionGroup var client: ClientOptions
    @Argument(
        help: "PATH@A, such as notes.txt@12 or notes.txt@\"10 minutes ago\".", completion: .file(),
        transform: VersionArgument.init(parsing:))
    var old: VersionArgument
    @Argument(
        help: "PATH@B (default: PATH as the agent serves it now: its buffer when open, else the disk).",
        completion: .file(),
        transform: VersionArgument.init(parsing:))
    var new: VersionArgument?
    @Option(
        name: .long,
        help:
            "Colour the diff as git does: auto (when standard output is a terminal and NO_COLOR is not set), always or never."
    )
    var color: ColorChoice = .auto

    func run() async throws {
        let isDifferent: Bool
        do {
            let before = try await version(old)
            let after = if let new { try await version(new) } else { try await now(old.path) }
            isDifferent = write(from: before, to: after)
        } catch let status as ExitCode where status == ExitStatus.failure {
            // The agent refused (no such version, history off): trouble, which diff says with 2.
            throw ExitCode(2)
        }
        if isDifferent { throw ExitStatus.failure }
    }

    /// One side of the diff: what the header names it, and its bytes.
    struct Side {
        /// `notes.txt@12`, or `notes.txt` for the file now.
        var name: String
        /// What follows the name in the header, after a tab: when, and what it is.
        var detail: String
        var content: [UInt8]
    }

    /// Version `argument` of its path; a removal is the file absent, with no lines.
    private func version(_ argument: VersionArgument) async throws -> Side {
        let request = ShowMethod(path: ClientOptions.absolute(argument.path), version: argument.selector, isRaw: true)
        let answer = try await client.call(request, content: nil)
        let version = answer.result.version
        let isRemoval = version.kind == .removed
        return Side(
            name: "\(version.path)@\(version.id)",
            detail: VersionLine.localTime(version.time) + " (" + version.kind.rawValue + (isRemoval ? ": no file" : "")
                + ")",
            content: isRemoval ? [] : answer.content ?? [])
    }

    /// The file at `path` as the agent serves it now: its buffer's content when open, else the disk.
    private func now(_ path: String) async throws -> Side {
        let answer = try await client.call(ReadMethod(path: ClientOptions.absolute(path), isRaw: true), content: nil)
        let exists = answer.content != nil
        return Side(
            name: answer.result.path, detail: exists ? "(now)" : "(now: no file)", content: answer.content ?? [])
    }

    /// Writes the diff from `before` to `after`; whether they differ.
    private func write(from before: Side, to after: Side) -> Bool {
        guard before.content != after.content else { return false }
        if UnifiedDiff.isBinary(before.content) || UnifiedDiff.isBinary(after.content) {
            print("Binary versions \(before.name) and \(after.name) differ")
            return true
        }
        let lines = UnifiedDiff.lines(
            from: before.content, to: after.content, oldLabel: before.name + "\t" + before.detail,
            newLabel: after.name + "\t" + after.detail)
        let isColoured = color.isOn
        var output: [UInt8] = []
        for line in lines {
            guard isColoured, let colour = Self.colour(of: line.kind) else {
                output += line.bytes
                continue
            }
            // As git colours: the escape codes around the line, its line break after them.
            output += Array(colour.utf8) + line.bytes.dropLast() + Array("\u{1B}[m\n".utf8)
        }
        StandardOutput.write(output)
        return true
    }

    /// git's colours for diff lines: bold headers, cyan hunk headers, red removals, green additions.
    private static func colour(of kind: UnifiedDiff.Line.Kind) -> String? {
        switch kind {
        case .fileHeader: "\u{1B}[1m"
        case .hunkHeader: "\u{1B}[36m"
        case .removed: "\u{1B}[31m"
        case .added: "\u{1B}[32m"
        case .context, .noNewline: nil
        }
    }
}

/// `--color auto|always|never`.
enum ColorChoice: String, ExpressibleByArgument, CaseIterable {
    case auto, always, never

    /// Whether to colour: `auto` when standard output is a terminal and `NO_COLOR` is unset or
    /// empty (no-color.org).
    var isOn: Bool {
        switch self {
        case .always: true
        case .never: false
        case .auto: isatty(STDOUT_FILENO) == 1 && (getenv("NO_COLOR").map { $0.pointee == 0 } ?? true)
        }
    }
}
