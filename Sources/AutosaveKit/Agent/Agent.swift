import Inotify
import Logging
import ServiceLifecycle

/// The running agent for one root, as a service: started by `autosave run`, stopped by a signal.
///
/// It logs `ready` (and tells a service manager `READY=1`) once everything a client needs is in
/// place: the watches, the journal's recovered edits and the listening control socket. On graceful
/// shutdown (`STOPPING=1`) it stops in reverse order of start-up — no more changes taken, every
/// dirty buffer saved, watching stopped — and logs `shutdown` once done.
public struct Agent: Service {
    /// Serves clients (the control socket) until its task is cancelled; calls `listening` with the
    /// socket's path once clients can connect.
    public typealias Control = @Sendable (
        _ workspace: Workspace<ContinuousClock>, _ listening: @escaping @Sendable (String) -> Void
    ) async throws -> Void

    private let configuration: ResolvedConfiguration
    private let logger: Logger
    private let control: Control?
    private let notifier: ServiceNotifier?
    private let stopDeadline: StopDeadline?

    /// - Parameters:
    ///   - control: the control socket; a socket that cannot listen when the agent starts stops it
    ///     (`run()` throws the reason), one that cannot listen again later is logged and done without.
    ///   - notifier: the service manager to tell `READY=1` and `STOPPING=1`, if any.
    ///   - stopDeadline: armed when graceful shutdown begins (a client's `stop` included), and told
    ///     how the final flush ended; it ends the process if the stop takes too long.
    public init(
        configuration: ResolvedConfiguration, logger: Logger, notifier: ServiceNotifier? = nil,
        stopDeadline: StopDeadline? = nil, control: Control? = nil
    ) {
        self.configuration = configuration
        self.logger = logger
        self.notifier = notifier
        self.stopDeadline = stopDeadline
        self.control = control
    }

    /// Runs until graceful shutdown.
    ///
    /// When the root is renamed, the agent follows it: it logs `root-moved`, stops serving at the
    /// old place without saving (every path there leads nowhere), and serves again from the new
    /// place with the same lock (its file moved along) and every unsaved edit.
    ///
    /// - Throws: `StateDirectory.LinkFound` when a symbolic link is in the state directory or on
    ///   the way to it, `AgentLock.LockError` when the lock cannot be taken
    ///   (`OtherUsersStateDirectory` when the state directory is another user's, naming them),
    ///   `InotifyError` when the root cannot be watched at all, `JournalError` when the journal
    ///   cannot be used, the control socket's error when it cannot listen at start, `RootRemoved`
    ///   when the root was deleted under the agent.
    public func run() async throws {
        try StateDirectory.verify(configuration.stateDirectory, root: configuration.root)
        let lock: LockBox
        do {
            lock = LockBox(try AgentLock(stateDirectory: configuration.stateDirectory, root: configuration.root))
        } catch {
            throw OtherUsersStateDirectory.explaining(error, stateDirectory: configuration.stateDirectory, root: configuration.root)
        }
        defer { withExtendedLifetime(lock) {} }
        let clock = ContinuousClock()
        let stopping = StopwatchBox()
        let flushed = FlushBox(deadline: stopDeadline)
        let current = WorkspaceBox()
        var configuration = self.configuration
        var carriedOver: [JournalRecord] = []
        await withGracefulShutdownHandler {
            while !stopping.isStopping {
                let startedAt = clock.now
                let workspace = Workspace(configuration: configuration, clock: clock, logger: logger)
                let ready: Readiness
                do {
                    ready = Readiness(
                        root: configuration.root, scan: try await workspace.start(carriedOver: carriedOver),
                        startedAt: startedAt, clock: clock, logger: logger, notifier: notifier,
                        finishingStartUp: { await workspace.finishStartUp() })
                } catch {
                    flushed.fail(error)
                    return
                }
                current.set(workspace)
                // A signal that came while the workspace was being made flushed the one before.
                if stopping.isStopping { flushed.start { await workspace.shutdown() } }
                await serve(workspace, configuration: configuration, lock: lock, ready: ready) { error in
                    flushed.fail(error)
                    flushed.start { await workspace.shutdown() }
                }
                if flushed.failure != nil { break }
                guard let moved = await workspace.movedRoot else { break }
                logger.warning(
                    "root-moved",
                    metadata: [
                        "from": "\(configuration.root)", "to": "\(moved)",
                        "next": "serving from the new place; paths stay relative to it",
                    ])
                carriedOver = await workspace.unsavedEdits
                configuration = configuration.moved(to: moved)
            }
        } onGracefulShutdown: { [stopDeadline] in
            stopDeadline?.arm()
            notifier?.send("STOPPING=1", logger: logger)
            stopping.start(clock.now)
            // Before any workspace is made there is nothing to flush, and nothing to tell the deadline.
            let workspace = current.get()
            flushed.start(isFlush: workspace != nil) { await workspace?.shutdown() ?? FlushOutcome() }
        }
        if let error = flushed.failure { throw error }
        if let workspace = current.get(), await workspace.isRootRemoved { throw RootRemoved(root: configuration.root) }
        let elapsed = stopping.started.map { clock.now - $0 } ?? .zero
        let milliseconds = elapsed.milliseconds
        let outcome = await flushed.result()
        var metadata: Logger.Metadata = [
            "root": "\(configuration.root)", "saved": "\(outcome.saved)", "failed": "\(outcome.failed)",
            "ms": "\((milliseconds * 10).rounded() / 10)",
        ]
        if !outcome.lost.isEmpty { metadata["lost"] = "\(outcome.lost.count)" }
        logger.log(level: outcome.lost.isEmpty ? .info : .error, "shutdown", metadata: metadata)
        if !outcome.lost.isEmpty { throw EditsNotOnDisk(paths: outcome.lost) }
    }

    /// Runs one workspace and its control socket until the workspace stops; `ready` once the
    /// socket listens, `cannotListen` when it cannot at first.
    private func serve(
        _ workspace: Workspace<ContinuousClock>, configuration: ResolvedConfiguration, lock: LockBox, ready: Readiness,
        cannotListen: @escaping @Sendable (any Error) -> Void
    ) async {
        let control = self.control
        let logger = self.logger
        await withTaskGroup { group in
            group.addTask {
                await withDiscardingTaskGroup { running in
                    // Start-up's last work, once `ready` is out; given up if the workspace stops first.
                    running.addTask { await ready.finishStartUp() }
                    await workspace.run()
                    running.cancelAll()
                }
            }
            if let control {
                group.addTask {
                    await Self.serve(
                        control, workspace: workspace, lock: lock, configuration: configuration, logger: logger, ready: ready,
                        cannotListen: cannotListen)
                }
            } else {
                ready.announce(socket: nil)
            }
            // The workspace stops last (after the flush); then the socket goes too.
            await group.next()
            group.cancelAll()
        }
    }
}

import Synchronization

/// The agent stopped with edits that are on disk nowhere (each logged `lost-to-disk`, with its
/// journal record); `autosave run` exits with status 1.
public struct EditsNotOnDisk: Error, CustomStringConvertible {
    public let paths: [String]
    public var description: String { "stopped with unsaved edits on disk nowhere: \(paths.joined(separator: ", "))" }
}

/// The agent stopped because its root was deleted under it (`root-removed` says where the
/// unsaved edits went); `autosave run` exits with status 1.
public struct RootRemoved: Error, CustomStringConvertible {
    public let root: String
    public var description: String { "the root \(root) was deleted while the agent ran" }
}

extension Agent {
    /// Runs the control socket; when the state directory is made again after someone deleted it,
    /// takes the lock again and binds a new socket there, so clients find the agent again.
    fileprivate static func serve(
        _ control: @escaping Control, workspace: Workspace<ContinuousClock>, lock: LockBox, configuration: ResolvedConfiguration,
        logger: Logger, ready: Readiness, cannotListen: @escaping @Sendable (any Error) -> Void
    ) async {
        let once: @Sendable (_ isFirst: Bool) async -> Void = { isFirst in
            let listened = ListenedBox()
            do {
                try await control(workspace) { socket in
                    listened.set()
                    if isFirst { ready.announce(socket: socket) }
                }
            } catch is CancellationError {} catch {
                // An agent no client can reach is of no use: at start, that ends it (`start-failed`).
                if isFirst && !listened.isSet { return cannotListen(error) }
                logger.error("control-failed", metadata: ["error": "\(error)", "next": "running without the control socket"])
            }
        }
        // One server at a time, each in a task group of its own (tasks added to a group after its
        // cancelAll() start cancelled): the old one is gone (its socket file too) before the next binds.
        var recreations = workspace.stateDirectoryRecreations.makeAsyncIterator()
        var isFirst = true
        while true {
            let isFirstServer = isFirst
            let again = await withTaskGroup { group in
                group.addTask { await once(isFirstServer) }
                // The stream ends when the agent stops (or this task is cancelled): so does the server.
                let again = await recreations.next() != nil
                group.cancelAll()
                return again
            }
            guard again else { return }
            do { lock.replace(with: try AgentLock(stateDirectory: configuration.stateDirectory, root: configuration.root)) } catch {
                logger.error("lock-failed", metadata: ["error": "\(error)", "next": "running on; a second agent for this root would not be refused"])
            }
            isFirst = false
        }
    }
}

/// The agent's lock, replaced when its file was deleted with the state directory.
private final class LockBox: Sendable {
    private let lock: Mutex<AgentLock>

    init(_ lock: AgentLock) { self.lock = Mutex(lock) }

    func replace(with fresh: AgentLock) { lock.withLock { $0 = fresh } }
}

/// Whether a control server got as far as listening.
private final class ListenedBox: Sendable {
    private let flag = Mutex(false)

    func set() { flag.withLock { $0 = true } }
    var isSet: Bool { flag.withLock { $0 } }
}

/// When graceful shutdown began, set from the shutdown handler.
private final class StopwatchBox: Sendable {
    private let instant = Mutex<ContinuousClock.Instant?>(nil)

    func start(_ now: ContinuousClock.Instant) { instant.withLock { $0 = now } }
    var started: ContinuousClock.Instant? { instant.withLock { $0 } }
    var isStopping: Bool { started != nil }
}

/// The workspace serving now (a new one after the root moved), for the shutdown handler.
private final class WorkspaceBox: Sendable {
    private let workspace = Mutex<Workspace<ContinuousClock>?>(nil)

    func set(_ new: Workspace<ContinuousClock>) { workspace.withLock { $0 = new } }
    func get() -> Workspace<ContinuousClock>? { workspace.withLock { $0 } }
}

/// The final flush, started from the shutdown handler and awaited once the agent stopped; or
/// why the agent could not start (again) at all. The stop deadline hears how it ended as soon as
/// it has, since what is awaited after it (requests in flight) may never end.
private final class FlushBox: Sendable {
    private let task = Mutex<Task<FlushOutcome, Never>?>(nil)
    private let error = Mutex<(any Error)?>(nil)
    private let deadline: StopDeadline?

    init(deadline: StopDeadline?) { self.deadline = deadline }

    func fail(_ failure: any Error) { error.withLock { $0 = failure } }
    var failure: (any Error)? { error.withLock { $0 } }

    func start(isFlush: Bool = true, _ flush: @escaping @Sendable () async -> FlushOutcome) {
        let deadline = isFlush ? self.deadline : nil
        task.withLock {
            // Owned by FlushBox; never cancelled: the final flush runs to its end, result() awaits it.
            $0 = Task {
                let outcome = await flush()
                deadline?.flushed(outcome)
                return outcome
            }
        }
    }

    func result() async -> FlushOutcome {
        await task.withLock { $0 }?.value ?? FlushOutcome()
    }
}
