import Logging
import ServiceLifecycle

/// The running agent for one root, as a service: started by `autosave run`, stopped by a signal.
///
/// On graceful shutdown it stops in reverse order of start-up and logs `shutdown` once done.
public struct Agent: Service {
    private let configuration: ResolvedConfiguration
    private let logger: Logger

    public init(configuration: ResolvedConfiguration, logger: Logger) {
        self.configuration = configuration
        self.logger = logger
    }

    /// Runs until graceful shutdown.
    ///
    /// - Throws: `InotifyError` when the root cannot be watched at all.
    public func run() async throws {
        let watcher = FileWatcher(configuration: configuration, clock: ContinuousClock(), logger: logger)
        try await watcher.start()
        let clock = ContinuousClock()
        let stopping = StopwatchBox()
        await withGracefulShutdownHandler {
            await watcher.run()
        } onGracefulShutdown: {
            stopping.start(clock.now)
            Task { await watcher.stop() }
        }
        let elapsed = stopping.started.map { clock.now - $0 } ?? .zero
        let milliseconds = Double(elapsed.components.attoseconds) / 1e15 + Double(elapsed.components.seconds) * 1000
        logger.info("shutdown", metadata: ["root": "\(configuration.root)", "ms": "\((milliseconds * 10).rounded() / 10)"])
    }
}

import Synchronization

/// When graceful shutdown began, set from the shutdown handler.
private final class StopwatchBox: Sendable {
    private let instant = Mutex<ContinuousClock.Instant?>(nil)

    func start(_ now: ContinuousClock.Instant) { instant.withLock { $0 = now } }
    var started: ContinuousClock.Instant? { instant.withLock { $0 } }
}
