import Inotify
import Logging

/// The moment a workspace is ready for clients: logs `ready` with what is watched and where to
/// reach the agent, and tells the service manager `READY=1`.
struct Readiness: Sendable {
    let root: String
    /// The first scan's figures, not the scan: its listings (tens of MB on a million files) are
    /// the known files' business, and the agent runs for as long as this is held.
    let directories: Int
    let watches: Int
    let files: Int
    let startedAt: ContinuousClock.Instant
    let clock: ContinuousClock
    let logger: Logger
    let notifier: ServiceNotifier?
    /// Start-up work that may end after `ready` (the known files of a big tree); start-up's
    /// pages are given back once it is done.
    let finishingStartUp: @Sendable () async -> Void
    /// One element once `ready` is out: what `finishStartUp()` waits for.
    private let announced: AsyncStream<Void>
    private let announcedContinuation: AsyncStream<Void>.Continuation

    init(
        root: String, scan: DirectoryScan, startedAt: ContinuousClock.Instant, clock: ContinuousClock, logger: Logger,
        notifier: ServiceNotifier?, finishingStartUp: @escaping @Sendable () async -> Void
    ) {
        self.root = root
        (directories, watches, files) = (scan.directories, scan.watches, scan.fileCount)
        self.startedAt = startedAt
        self.clock = clock
        self.logger = logger
        self.notifier = notifier
        self.finishingStartUp = finishingStartUp
        (announced, announcedContinuation) = AsyncStream.makeStream(of: Void.self)
    }

    /// Announces readiness; `socket` is where clients connect (nil when the agent serves none).
    func announce(socket: String?) {
        let elapsed = clock.now - startedAt
        let milliseconds = elapsed.milliseconds
        var metadata: Logger.Metadata = [
            "root": "\(root)", "dirs": "\(directories)", "watches": "\(watches)", "files": "\(files)",
            "ms": "\((milliseconds * 10).rounded() / 10)",
        ]
        if let socket { metadata["socket"] = "\(socket)" }
        logger.info("ready", metadata: metadata)
        notifier?.send("READY=1", logger: logger)
        announcedContinuation.yield()
        announcedContinuation.finish()
    }

    /// Once `ready` is out, finishes start-up's last work and gives start-up's pages back; returns
    /// without doing so when cancelled first (the workspace stopped before it was ready).
    func finishStartUp() async {
        for await _ in announced {
            // Not before start-up's last work is done: what it frees and faults in after `ready`
            // would stay resident (3.5 MB on a million files).
            await finishingStartUp()
            StartUpPages.giveBack()
            return
        }
    }
}
