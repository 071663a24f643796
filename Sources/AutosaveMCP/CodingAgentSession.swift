import AutosaveControl
import AutosaveKit
import ByteNames
import FoundationEssentials
import Glibc
import Logging

/// One coding agent's session with the agent: its tool calls carried out as requests on the
/// control socket, what it last saw of each file, and what others changed since.
///
/// The promises: its edits never overwrite anyone's unsaved work (an edit is placed in the text
/// the model last read; when others changed the file since, the two are merged line by line, and
/// where they touch the same lines nothing changes and the tool fails, naming the lines); when the
/// agent stops answering, the call goes on through the project's next agent (found, or started
/// by `agents`), and a change whose answer was lost is made at most once; no result passes
/// `ResultBound`.
actor CodingAgentSession {
    /// What the model last saw of a file: the base its next edit is merged from.
    struct View {
        var revision: Int
        var text: [UInt8]
    }

    /// A change sent whose answer did not come: what it was made from and what it makes, so that
    /// the call's next try can tell whether it went in.
    enum ChangeInFlight {
        /// A write or an edit of `path`, made on `base`, making `result`.
        case text(path: String, base: View, result: [UInt8])
        /// A patch.
        case patch(String)
    }

    /// One tool call's tries: its change id (sent with each try, so an agent that took it once
    /// answers the next try with what it did) and the change a lost answer left in doubt.
    struct Attempt {
        let changeID = UUID()
        var inDoubt: ChangeInFlight?
    }

    private(set) var socketPath: String
    let agents: any AgentFinder
    let logger: Logger
    let changes = ChangeLog()
    var views: PathMap<View> = [:]
    /// The change whose request is on its way now.
    var inFlight: ChangeInFlight?
    private var follower: Task<Void, Never>?

    /// A session on the agent at `socketPath`; `agents` finds another when it stops answering
    /// (without it, that socket is the only one).
    init(socketPath: String, agents: (any AgentFinder)? = nil, logger: Logger? = nil) {
        self.socketPath = socketPath
        self.agents = agents ?? FixedSocket(socket: socketPath)
        self.logger = logger ?? Logger(label: "autosave.mcp") { _ in SwiftLogNoOpLogHandler() }
    }

    /// Names the session after the MCP client (`initialize`'s clientInfo).
    nonisolated func name(after client: String) {
        // Unique per session: two sessions of one client see each other's edits as news.
        changes.ownName = "mcp:\(client)#\(getpid())"
    }

    /// The name its edits carry in `edited` events.
    var clientName: String { changes.ownName }

    /// Subscribes to the agent's events, for `changes`, unless a subscription is up.
    ///
    /// - Throws: `AgentSilence.notSent` when the agent cannot be reached.
    func follow() async throws {
        guard !changes.following.isFollowing else { return }
        let client = try await connect()
        let changes = self.changes
        let generation = changes.started()
        follower?.cancel()
        // Owned by the session; cancelled by the next follow() and by stop() (the MCP server ending).
        follower = Task {
            do {
                try await client.subscribe { method, value in
                    if method == "event" { changes.take(value) }
                }
                changes.ended(generation, "the agent closed the subscription")
            } catch {
                changes.ended(generation, "the agent stopped sending events")
            }
        }
    }

    func stop() {
        follower?.cancel()
    }

    /// Carries out one tool call: the text the model reads, and whether it is a failure (`isError`).
    ///
    /// When the agent does not answer, the call goes on through the agent `agents` finds (or
    /// starts), twice at most; the text then says so first.
    func call(_ tool: String, _ arguments: JSONValue?) async -> (text: String, isError: Bool) {
        let input = ToolInput(arguments)
        var attempt = Attempt()
        var note = ""
        var tries = 0
        while true {
            tries += 1
            do {
                try await follow()
                let text = try await carryOut(tool, input, attempt)
                inFlight = nil
                return (ResultBound.cut(note + text), false)
            } catch let silence as AgentSilence {
                let doubt = silence.isAnswerLost ? inFlight : nil
                inFlight = nil
                logger.warning(
                    "mcp-agent-gone",
                    metadata: ["socket": "\(socketPath)", "error": "\(silence.cause)", "next": "joining the project's agent, or starting one"])
                do {
                    guard tries <= 2 else { throw AgentUnavailable.unsteady(socket: socketPath) }
                    socketPath = try await agents.agent(replacing: socketPath)
                } catch {
                    return (ResultBound.cut(Self.unanswered(tool, doubt: doubt, because: error)), true)
                }
                attempt.inDoubt = doubt ?? attempt.inDoubt
                note = "(The autosave agent this server worked through stopped answering; it now works through the project's "
                    + "next agent, whose revisions may count again from 0.)\n"
            } catch let failure as ToolFailure {
                inFlight = nil
                return (ResultBound.cut(note + failure.message), true)
            } catch {
                inFlight = nil
                return (ResultBound.cut(note + "\(tool) failed: \(error); nothing was changed"), true)
            }
        }
    }

    private func carryOut(_ tool: String, _ input: ToolInput, _ attempt: Attempt) async throws -> String {
        switch tool {
        case "read_file": return try await readFile(input)
        case "write_file": return try await writeFile(input, attempt)
        case "edit_file": return try await editFile(input, attempt)
        case "apply_patch": return try await applyPatch(input, attempt)
        case "changes": return try changesSince(input)
        case "save": return try await save(input)
        case "status": return try await status()
        case "history": return try await history(input)
        case "restore": return try await restore(input)
        case "undo_my_changes": return try await undoMyChanges(input)
        default:
            throw ToolFailure("there is no tool \(tool); the tools are \(CodingAgentTools.names.joined(separator: ", "))")
        }
    }

    /// What a model reads when no agent answers: that nothing was changed, or, when a change's
    /// answer was lost, that it may be in and what to read before redoing it.
    static func unanswered(_ tool: String, doubt: ChangeInFlight?, because error: any Error) -> String {
        switch doubt {
        case nil:
            return "\(tool) changed nothing: \(error)."
        case .text(let path, _, _)?:
            return "The autosave agent stopped before it answered, so your change to \(path) may or may not be in, "
                + "and it was not sent again: \(error). "
                + "Once an agent answers, read_file \(path) and redo the change only if it is missing."
        case .patch?:
            return "The autosave agent stopped before it answered, so your patch may or may not be in, "
                + "and it was not sent again: \(error). Once an agent answers, read_file the files it changes and apply what is missing."
        }
    }
}
