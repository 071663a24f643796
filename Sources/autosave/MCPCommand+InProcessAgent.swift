import AutosaveKit
import AutosaveMCP
import Glibc
import Logging
import ServiceLifecycle
import Synchronization

/// The agent `autosave mcp` runs in its own process when none answers for the project: started
/// when the server starts, or later, when the agent it worked through stopped; stopped, saving
/// every unsaved edit, when the server stops.
///
/// It is `autosave run`'s service group (the same lock and socket, so editors and the CLI join it,
/// and SIGTERM, SIGINT or SIGHUP stop it cleanly). At most one runs per process; `start` throws
/// `AgentLock.LockError.alreadyRunning` when another process holds the project's lock.
final class InProcessAgent: Sendable {
    private struct Running: Sendable {
        let socket: String
        let shutdown: ShutdownTrigger
        let done: Task<(any Error)?, Never>
    }

    private enum State: Sendable {
        case idle
        case running(Running)
        /// `stop` was called, or the agent stopped of its own accord: none is started again.
        case over
    }

    private let state = Mutex(State.idle)
    private let resolved: ResolvedConfiguration
    private let logger: Logger
    private let ended: AsyncStream<(any Error)?>.Continuation
    /// Yields once when the agent started here stops of its own accord (a signal, a client's
    /// `stop`, a failure): its error, nil when it stopped cleanly.
    let endings: AsyncStream<(any Error)?>

    init(_ resolved: ResolvedConfiguration, logger: Logger) {
        self.resolved = resolved
        self.logger = logger
        (endings, ended) = AsyncStream.makeStream(of: (any Error)?.self)
    }

    /// Starts the agent (unless it runs already) and returns its socket once clients can connect.
    ///
    /// - Throws: the agent's own error when it cannot start (`AgentLock.LockError.alreadyRunning`
    ///   when another process holds the lock); `AgentUnavailable.stopping` once the server stops.
    func start() async throws -> String {
        switch state.withLock({ $0 }) {
        case .running(let running): return running.socket
        case .over: throw AgentUnavailable.stopping
        case .idle: break
        }
        let (listening, listened) = AsyncStream.makeStream(of: String.self)
        let (group, shutdown) = RunCommand.agentGroup(resolved, logger: logger) { path in
            listened.yield(path)
            listened.finish()
        }
        // Owned by InProcessAgent (Running.done); never cancelled: stop() ends it through the shutdown trigger.
        let done = Task { () -> (any Error)? in
            defer { listened.finish() }
            do {
                try await group.run()
                return nil
            } catch {
                return error
            }
        }
        var socket: String?
        for await path in listening { socket = path }
        guard let socket else {
            let error = await done.value
            Self.stopOnSignalsAgain()
            throw error ?? AgentUnavailable.stopping
        }
        let running = Running(socket: socket, shutdown: shutdown, done: done)
        let isOver = state.withLock { state in
            guard case .idle = state else { return true }
            state = .running(running)
            return false
        }
        if isOver {
            shutdown.trigger()
            _ = await done.value
            throw AgentUnavailable.stopping
        }
        // Owned by InProcessAgent; never cancelled: it ends with `done`, and tells `endings` if it ended on its own.
        Task {
            let error = await done.value
            let onItsOwn = self.state.withLock { state in
                guard case .running = state else { return false }
                state = .over
                return true
            }
            if onItsOwn { self.ended.yield(error) }
        }
        return socket
    }

    /// Gives SIGTERM, SIGINT and SIGHUP back their default action (ending the process) after an
    /// agent's service group that never served: it left them ignored (UnixSignals sets `SIG_IGN`
    /// and does not restore it), and a server that goes on, joined to another's agent, must still
    /// stop on them, as one that never tried to start an agent does.
    private static func stopOnSignalsAgain() {
        for number in [SIGTERM, SIGINT, SIGHUP] { signal(number, SIG_DFL) }
    }

    /// Stops the agent started here, if one runs, once it has saved every unsaved edit; none is
    /// started after. Returns its error, nil when it stopped cleanly (or none ran).
    func stop() async -> (any Error)? {
        let running = state.withLock { state -> Running? in
            defer { state = .over }
            if case .running(let running) = state { return running }
            return nil
        }
        guard let running else { return nil }
        running.shutdown.trigger()
        return await running.done.value
    }
}
