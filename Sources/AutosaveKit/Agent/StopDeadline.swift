import Dispatch
import Glibc
import Logging
import Synchronization

/// Ends the process a bounded time after a stop was asked for, whatever a blocking call is doing.
///
/// A stop waits for the final flush and for every request in flight, and those wait for system
/// calls that may never return: a read or a save on a hung FUSE or NFS mount, an `open` held by
/// another process's lease, an fsync that takes minutes. The agent then closed its socket and
/// kept running, and its lock, for ever. Once armed (by SIGINT, SIGTERM, SIGHUP or a client's
/// `stop`), a thread of its own waits `timeout`; if the process is still there, it logs
/// `stop-timeout` (what is still blocked, and where the unsaved edits are: in the journal, which
/// the next start replays, as after `kill -9`) and exits with status 1. The lock goes with the
/// process. Neither the countdown nor the signals that arm it need Swift's task threads, which a
/// blocked call can hold too; a stop that finishes in time ends the process before it fires.
public final class StopDeadline: Sendable {
    private struct State {
        var armedAt: ContinuousClock.Instant?
        var flushed: FlushOutcome?
        var sources = SignalSources()
    }

    /// The signal sources, kept alive while the process runs. Dispatch sources are thread-safe
    /// objects that Swift does not mark `Sendable`; these are only created and kept.
    private struct SignalSources: @unchecked Sendable {
        var sources: [any DispatchSourceSignal] = []
    }

    private let timeout: Duration
    private let isJournaled: Bool
    private let logger: Logger
    private let state = Mutex(State())

    /// - Parameters:
    ///   - timeout: how long a stop may take (`limits.stopTimeoutMs`).
    ///   - isJournaled: whether acknowledged edits are in the journal (`journal.enabled`), which
    ///     decides what the log line says becomes of the edits not saved yet.
    public init(timeout: Duration, isJournaled: Bool, logger: Logger) {
        self.timeout = timeout
        self.isJournaled = isJournaled
        self.logger = logger
    }

    /// Starts the countdown; later calls do nothing.
    public func arm() {
        let isFirst = state.withLock { state in
            guard state.armedAt == nil else { return false }
            state.armedAt = .now
            return true
        }
        if isFirst { startCountdown() }
    }

    /// Arms the countdown when one of `signals` arrives, from a dispatch queue of its own: the
    /// service group hears the same signals, but only once a Swift task thread is free to run it.
    public func arm(on signals: [CInt]) {
        let queue = DispatchQueue(label: "autosave.stop-deadline")
        let made = SignalSources(
            sources: signals.map { number in
                let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
                source.setEventHandler { [self] in arm() }
                source.resume()
                return source
            })
        state.withLock { $0.sources.sources += made.sources }
    }

    /// Records how the final flush ended, for the line logged if the process must be ended anyway.
    public func flushed(_ outcome: FlushOutcome) {
        state.withLock { $0.flushed = outcome }
    }

    private func startCountdown() {
        var thread = pthread_t()
        let box = Unmanaged.passRetained(self).toOpaque()
        let created = pthread_create(
            &thread, nil,
            { argument in
                let deadline = Unmanaged<StopDeadline>.fromOpaque(argument!).takeRetainedValue()
                deadline.waitThenEnd()
            }, box)
        guard created == 0 else {
            Unmanaged<StopDeadline>.fromOpaque(box).release()
            logger.warning(
                "stop-deadline-failed",
                metadata: ["error": "\(String(cString: strerror(created)))", "next": "stopping without a deadline"])
            return
        }
        pthread_detach(thread)
    }

    private func waitThenEnd() -> Never {
        let armedAt = state.withLock { $0.armedAt } ?? .now
        var left = armedAt + timeout - .now
        while left > .zero {
            var request = timespec(tv_sec: Int(left.components.seconds), tv_nsec: Int(left.components.attoseconds / 1_000_000_000))
            var remaining = timespec()
            guard nanosleep(&request, &remaining) != 0 else { break }
            left = armedAt + timeout - .now
        }
        end(waited: .now - armedAt)
    }

    private func end(waited: Duration) -> Never {
        // A log line blocked on a full pipe must not keep the process either: SIGALRM's default
        // action ends it (status 142) if the line has not gone in 5 s.
        alarm(5)
        let (blocked, oldest) = BlockingIO.callsInFlight()
        let flushed = state.withLock { $0.flushed }
        var metadata: Logger.Metadata = [
            "ms": "\(Self.milliseconds(waited))", "timeoutMs": "\(Self.milliseconds(timeout))", "blockingCalls": "\(blocked)",
        ]
        if let oldest { metadata["oldestMs"] = "\(Self.milliseconds(oldest))" }
        let next = "exiting with status 1 without waiting for them; "
        if let flushed, flushed.lost.isEmpty {
            metadata["saved"] = "\(flushed.saved)"
            metadata["next"] = "\(next)every unsaved edit was saved (or copied aside) before the deadline"
        } else if isJournaled {
            metadata["next"] =
                "\(next)edits not saved yet are in the journal, and the next start saves them (logged `recovered`); the lock goes with the process"
        } else {
            metadata["next"] = "\(next)edits not saved yet are lost: the journal is off (journal.enabled false)"
        }
        logger.error("stop-timeout", metadata: metadata)
        _exit(1)
    }

    private static func milliseconds(_ duration: Duration) -> Int {
        Int((duration / .milliseconds(1)).rounded())
    }
}
