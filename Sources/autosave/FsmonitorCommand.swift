import ArgumentParser
import AutosaveControl
import AutosaveKit
import ByteNames
import CAutosaveShims
import FoundationEssentials
import Glibc

/// `autosave fsmonitor 2 TOKEN`: git's `core.fsmonitor` hook (protocol version 2).
struct FsmonitorCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fsmonitor",
        abstract: "git's core.fsmonitor hook: `git config core.fsmonitor 'autosave fsmonitor'` (see docs/git.md).",
        discussion: """
            Prints a new token, a NUL, then the paths (relative to the work tree, NUL-separated) changed \
            since TOKEN, once the agent has taken in every change made before the call; or `/` (git then \
            looks at everything) when no agent watches this work tree or the token cannot be answered exactly.
            """)
    @Argument(help: "The hook protocol's version; only 2 is spoken.") var version: Int
    @Argument(help: "The token the last call printed (git keeps it in the index).") var token: String = ""
    @Flag(name: .long, help: "When no agent runs for the work tree, start one (in the background) for next time.")
    var start = false

    func run() throws {
        Glibc.exit(FsmonitorHook.run(arguments: [String(version), token] + (start ? ["--start"] : [])))
    }
}

/// The hook itself, also reached straight from `main` without the argument parser: git runs it
/// before every `status`, so its start-up is what git waits for.
enum FsmonitorHook {
    /// Answers git and returns the exit status: 0 with an answer (even `/`), 1 for a version
    /// other than 2 (git then scans by itself and says why).
    static func run(arguments: [String]) -> Int32 {
        let operands = arguments.filter { $0 != "--start" }
        guard operands.first == "2" else {
            AgentLogHandler.standardError(
                "autosave fsmonitor: hook version \(operands.first ?? "(none)") is not spoken, only 2; "
                    + "set `git config core.fsmonitorHookVersion 2` (git scans the work tree by itself meanwhile)")
            return 1
        }
        let token = operands.count > 1 ? operands[1] : ""
        let workTree = FileManager.default.currentDirectoryPath
        guard let socket = socket(for: workTree) else {
            if arguments.contains("--start") { startAgent(for: workTree) }
            return answerEverything(token: "autosave:none:0")
        }
        let request = ChangesMethod(filter: ChangeFilter(since: token.isEmpty ? nil : token), includesUnsettled: true, includesIgnored: true)
        let result: ChangesMethod.Result
        do {
            result = try BlockingControlClient.call(request, socketPath: socket) { _ in }.result
        } catch {
            AgentLogHandler.standardError("autosave fsmonitor: the agent did not answer (\(error)); git scans the work tree by itself")
            return answerEverything(token: "autosave:none:0")
        }
        let answer = result.answer
        // The agent may watch a folder above the work tree (its paths then start with the work
        // tree's place in it), never only a part of it.
        let prefix: String
        if workTree.isSameName(as: result.root) {
            prefix = ""
        } else if let below = workTree.pathBelow(result.root) {
            prefix = below + "/"
        } else {
            return answerEverything(token: answer.clock.description)
        }
        guard !answer.isFresh else { return answerEverything(token: answer.clock.description) }
        var output = Array(answer.clock.description.utf8)
        output.append(0)
        for change in answer.changes {
            for path in [change.path] + (change.from.map { [$0] } ?? []) {
                guard path.utf8.starts(with: prefix.utf8) else { continue }
                let relative = path.utf8.dropFirst(prefix.utf8.count)
                guard !relative.isEmpty else { continue }
                output.append(contentsOf: relative)
                output.append(0)
            }
        }
        StandardOutput.write(output)
        return 0
    }

    /// `TOKEN NUL /`: git looks at every file, as it would with no hook. Always correct.
    private static func answerEverything(token: String) -> Int32 {
        StandardOutput.write(Array(token.utf8) + [0] + Array("/".utf8))
        return 0
    }

    /// The socket of the agent for `workTree` (or a folder above it), if one runs and is this user's.
    private static func socket(for workTree: String) -> String? {
        if let variable = ProcessInfo.processInfo.environment["AUTOSAVE_SOCKET"] { return variable }
        guard case .socket(let found, _)? = ClientOptions.discover(from: workTree) else { return nil }
        return found
    }

    /// Starts `autosave run WORKTREE` in a session of its own, its log in the work tree's state
    /// directory, and does not wait for it: git scans this time, the next call finds it.
    private static func startAgent(for workTree: String) {
        let state = workTree + "/.autosave"
        mkdir(state, 0o700)
        let log = state + "/fsmonitor-started.log"
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, log, O_WRONLY | O_CREAT | O_APPEND, 0o600)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        // POSIX_SPAWN_SETSID (glibc's 0x80, not imported into Swift): the agent outlives git.
        posix_spawnattr_setflags(&attributes, 0x80)
        let executable = "/proc/self/exe"
        let arguments = ["autosave", "run", workTree]
        var argv = arguments.map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var pid: pid_t = 0
        let status = posix_spawn(&pid, executable, &actions, &attributes, &argv, environ)
        if status != 0 {
            AgentLogHandler.standardError("autosave fsmonitor: could not start an agent for \(workTree): \(String(cString: strerror(status)))")
        }
    }
}
