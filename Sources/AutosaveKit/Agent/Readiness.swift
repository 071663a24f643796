import Inotify
import Logging

/// The moment a workspace is ready for clients: logs `ready` with what is watched and where to
/// reach the agent, and tells the service manager `READY=1`.
struct Readiness: Sendable {
    let root: String
    let scan: DirectoryScan
    let startedAt: ContinuousClock.Instant
    let clock: ContinuousClock
    let logger: Logger
    let notifier: ServiceNotifier?

    /// Announces readiness; `socket` is where clients connect (nil when the agent serves none).
    func announce(socket: String?) {
        let elapsed = clock.now - startedAt
        let milliseconds = Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15
        var metadata: Logger.Metadata = [
            "root": "\(root)", "dirs": "\(scan.directories)", "watches": "\(scan.watches)", "files": "\(scan.fileCount)",
            "ms": "\((milliseconds * 10).rounded() / 10)",
        ]
        if let socket { metadata["socket"] = "\(socket)" }
        logger.info("ready", metadata: metadata)
        notifier?.send("READY=1", logger: logger)
        StartUpPages.giveBack()
    }
}
