import AutosaveKit
import Glibc
import Logging

/// Finds the agent of one project for `autosave mcp`: a running one, else one started in this
/// process; while another process holds the project's lock (an agent still saving as it stops, or
/// another server that won the race to start one), it waits for that agent's socket to answer or
/// for the lock to be free, and tries again.
///
/// The lock decides who runs the agent: of several servers that lose theirs at once, exactly one
/// starts the next and the others join it. Starting is tried again only once the process that held
/// the lock is gone (each try makes an agent's service group), and waiting ends after `patience`.
public struct ProjectAgents<C: Clock>: AgentFinder where C.Duration == Duration {
    /// The socket of an agent answering for the project, if one does.
    public typealias Find = @Sendable () async -> String?
    /// Starts an agent in this process and returns its socket once it listens; throws
    /// `AgentLock.LockError.alreadyRunning` when another process holds the lock.
    public typealias Start = @Sendable () async throws -> String
    /// Whether the process `pid` is still there.
    public typealias IsRunning = @Sendable (_ pid: Int) -> Bool

    let root: String
    let find: Find
    let start: Start
    let isRunning: IsRunning
    let clock: C
    let patience: Duration
    let logger: Logger

    /// - Parameters:
    ///   - root: the project, as messages name it.
    ///   - patience: how long to wait for the holder of the lock before giving up.
    ///   - isRunning: whether a process is still there (by default `kill(pid, 0)`: another
    ///     user's process counts as there).
    public init(
        root: String, clock: C, patience: Duration = .seconds(30), logger: Logger, find: @escaping Find, start: @escaping Start,
        isRunning: @escaping IsRunning = { kill(pid_t($0), 0) == 0 || errno == EPERM }
    ) {
        self.root = root
        self.clock = clock
        self.patience = patience
        self.logger = logger
        self.find = find
        self.start = start
        self.isRunning = isRunning
    }

    /// Joins the agent that answers for the project, or starts one here (logging `mcp-joined` or
    /// `mcp-serving`), whether or not `gone` is the same socket: every agent of a root binds the
    /// same path when it can.
    ///
    /// - Throws: `AgentUnavailable.cannotStart` when starting failed for another reason than the
    ///   lock, `.lockHeld` after `patience` without an answer, `.stopping` when the task is cancelled.
    public func agent(replacing gone: String?) async throws -> String {
        let deadline = clock.now.advanced(by: patience)
        var pause = Duration.milliseconds(10)
        var holder: Int?
        while true {
            if Task.isCancelled { throw AgentUnavailable.stopping }
            if let socket = await find() {
                logger.info("mcp-joined", metadata: ["socket": "\(socket)"])
                return socket
            }
            if holder.map(isRunning) != true {
                do {
                    let socket = try await start()
                    logger.info("mcp-serving", metadata: ["socket": "\(socket)", "agent": "in-process"])
                    return socket
                } catch AgentLock.LockError.alreadyRunning(_, let pid) {
                    holder = pid
                    logger.info(
                        "mcp-waiting",
                        metadata: ["pid": "\(pid.map(String.init) ?? "?")", "next": "joining its agent once its socket answers, or starting one once it is gone"])
                } catch {
                    throw AgentUnavailable.cannotStart(root: root, reason: "\(error)", cause: error)
                }
            }
            // The holder is stopping (its lock goes with it) or starting (its socket comes soon).
            guard clock.now.advanced(by: pause) < deadline else {
                throw AgentUnavailable.lockHeld(root: root, pid: holder, waited: patience)
            }
            do { try await clock.sleep(for: pause) } catch { throw AgentUnavailable.stopping }
            pause = min(pause * 2, .milliseconds(320))
        }
    }
}
