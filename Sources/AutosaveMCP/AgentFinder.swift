import AutosaveKit

/// How a coding agent's session reaches the autosave agent: the socket of one that answers for
/// the project, and another when that one stops answering (the agent stopped: the `autosave mcp`
/// that ran it exited, or someone stopped it).
public protocol AgentFinder: Sendable {
    /// The socket of an agent that answers for the project now: a running one, else one this
    /// process starts.
    ///
    /// - Parameter gone: the socket that stopped answering (nil when the session starts).
    /// - Throws: `AgentUnavailable` when no agent answers and none can be started here; the
    ///   caller changed nothing meanwhile.
    func agent(replacing gone: String?) async throws -> String
}

/// The one socket a session was given, and no other: what a session made without a finder uses.
struct FixedSocket: AgentFinder {
    let socket: String

    func agent(replacing gone: String?) async throws -> String {
        guard gone == nil else { throw AgentUnavailable.noOther(socket: socket) }
        return socket
    }
}

/// Why no agent answers for the project: what a model reads (after the tool's own words on what
/// was, or was not, changed).
public enum AgentUnavailable: Error, CustomStringConvertible {
    /// No agent answers for `root` and starting one in this process failed with `reason`;
    /// `cause` is the agent's own error (`autosave mcp` exits with it at start).
    case cannotStart(root: String, reason: String, cause: any Error)
    /// Another process holds `root`'s lock (`pid`, an agent still saving as it stops, or another
    /// server starting one) and no agent answered within `waited`.
    case lockHeld(root: String, pid: Int?, waited: Duration)
    /// The agent at `socket`, the only one this session may use, stopped answering.
    case noOther(socket: String)
    /// The agent at `socket`, found for this call, stopped answering too.
    case unsteady(socket: String)
    /// The server is stopping: it looks for no agent any more.
    case stopping

    /// The reason, as a model reads it.
    public var description: String {
        switch self {
        case .cannotStart(let root, let reason, _):
            "no autosave agent answers for \(root), and none could be started here: \(reason)"
        case .lockHeld(let root, let pid, let waited):
            "no autosave agent answered for \(root) within \(Self.spoken(waited)): another process"
                + (pid.map { " (pid \($0))" } ?? "") + " holds its lock, an agent still saving as it stops or one starting; "
                + "call the tool again in a moment"
        case .noOther(let socket):
            "the autosave agent at \(socket) stopped answering, and this server knows no other"
        case .unsteady(let socket):
            "the project's agent at \(socket) stopped answering again right after this server found it"
        case .stopping:
            "the MCP server is stopping"
        }
    }

    /// "30 s", or "15 ms" under a second.
    private static func spoken(_ duration: Duration) -> String {
        duration >= .seconds(1) ? "\(duration.components.seconds) s" : "\(duration.wholeMilliseconds) ms"
    }
}
