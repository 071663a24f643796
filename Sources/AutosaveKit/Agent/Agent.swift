import Logging
import ServiceLifecycle

/// The running agent for one root, as a service: started by `autosave run`, stopped by a signal.
///
/// On graceful shutdown it stops in reverse order of start-up — no more changes taken, every dirty
/// buffer saved, watching stopped — and logs `shutdown` once done.
public struct Agent: Service {
    private let configuration: ResolvedConfiguration
    private let logger: Logger
    private let control: (@Sendable (Workspace<ContinuousClock>) async throws -> Void)?

    /// - Parameter control: serves clients (the control socket) until its task is cancelled.
    public init(
        configuration: ResolvedConfiguration, logger: Logger,
        control: (@Sendable (Workspace<ContinuousClock>) async throws -> Void)? = nil
    ) {
        self.configuration = configuration
        self.logger = logger
        self.control = control
    }

    /// Runs until graceful shutdown.
    ///
    /// When the root is renamed, the agent follows it: it logs `root-moved`, stops serving at the
    /// old place without saving (every path there leads nowhere), and serves again from the new
    /// place with the same lock (its file moved along) and every unsaved edit.
    ///
    /// - Throws: `InotifyError` when the root cannot be watched at all, `RootRemoved` when the root
    ///   was deleted under the agent.
    public func run() async throws {
        let lock = LockBox(try AgentLock(stateDirectory: configuration.stateDirectory, root: configuration.root))
        defer { withExtendedLifetime(lock) {} }
        let clock = ContinuousClock()
        let stopping = StopwatchBox()
        let flushed = FlushBox()
        let current = WorkspaceBox()
        var configuration = self.configuration
        var carriedOver: [JournalRecord] = []
        await withGracefulShutdownHandler {
            while !stopping.isStopping {
                let workspace = Workspace(configuration: configuration, clock: clock, logger: logger)
                do { try await workspace.start(carriedOver: carriedOver) } catch {
                    flushed.fail(error)
                    return
                }
                current.set(workspace)
                // A signal that came while the workspace was being made flushed the one before.
                if stopping.isStopping { flushed.start { await workspace.shutdown() } }
                await serve(workspace, configuration: configuration, lock: lock)
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
        } onGracefulShutdown: {
            stopping.start(clock.now)
            flushed.start { await current.get()?.shutdown() ?? (0, 0) }
        }
        if let error = flushed.failure { throw error }
        if let workspace = current.get(), await workspace.isRootRemoved { throw RootRemoved(root: configuration.root) }
        let elapsed = stopping.started.map { clock.now - $0 } ?? .zero
        let milliseconds = Double(elapsed.components.attoseconds) / 1e15 + Double(elapsed.components.seconds) * 1000
        let (saved, failed) = await flushed.result()
        logger.info(
            "shutdown",
            metadata: [
                "root": "\(configuration.root)", "saved": "\(saved)", "failed": "\(failed)",
                "ms": "\((milliseconds * 10).rounded() / 10)",
            ])
    }

    /// Runs one workspace and its control socket until the workspace stops.
    private func serve(_ workspace: Workspace<ContinuousClock>, configuration: ResolvedConfiguration, lock: LockBox) async {
        let control = self.control
        let logger = self.logger
        await withTaskGroup { group in
            group.addTask { await workspace.run() }
            if let control {
                group.addTask {
                    await Self.serve(control, workspace: workspace, lock: lock, configuration: configuration, logger: logger)
                }
            }
            // The workspace stops last (after the flush); then the socket goes too.
            await group.next()
            group.cancelAll()
        }
    }
}

import Synchronization

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
        _ control: @escaping @Sendable (Workspace<ContinuousClock>) async throws -> Void, workspace: Workspace<ContinuousClock>,
        lock: LockBox, configuration: ResolvedConfiguration, logger: Logger
    ) async {
        let once: @Sendable () async -> Void = {
            do { try await control(workspace) } catch is CancellationError {} catch {
                logger.error("control-failed", metadata: ["error": "\(error)", "next": "running without the control socket"])
            }
        }
        // One server at a time: the old one is gone (its socket file too) before the next binds.
        // (A task group cannot do this: tasks added after cancelAll() start cancelled.)
        var server = Task { await once() }
        for await _ in workspace.stateDirectoryRecreations {
            server.cancel()
            await server.value
            do { lock.replace(with: try AgentLock(stateDirectory: configuration.stateDirectory, root: configuration.root)) } catch {
                logger.error("lock-failed", metadata: ["error": "\(error)", "next": "running on; a second agent for this root would not be refused"])
            }
            server = Task { await once() }
        }
        // The stream ends when the agent stops (or this task is cancelled): so does the server.
        server.cancel()
        await server.value
    }
}

/// The agent's lock, replaced when its file was deleted with the state directory.
private final class LockBox: Sendable {
    private let lock: Mutex<AgentLock>

    init(_ lock: AgentLock) { self.lock = Mutex(lock) }

    func replace(with fresh: AgentLock) { lock.withLock { $0 = fresh } }
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
/// why the agent could not start (again) at all.
private final class FlushBox: Sendable {
    private let task = Mutex<Task<(saved: Int, failed: Int), Never>?>(nil)
    private let error = Mutex<(any Error)?>(nil)

    func fail(_ failure: any Error) { error.withLock { $0 = failure } }
    var failure: (any Error)? { error.withLock { $0 } }

    func start(_ flush: @escaping @Sendable () async -> (saved: Int, failed: Int)) {
        task.withLock { $0 = Task { await flush() } }
    }

    func result() async -> (saved: Int, failed: Int) {
        await task.withLock { $0 }?.value ?? (0, 0)
    }
}
