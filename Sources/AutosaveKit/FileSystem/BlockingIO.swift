import NIOPosix
import Synchronization

/// Runs blocking system calls (reads, writes, fsyncs) off Swift's cooperative thread pool.
///
/// The cooperative pool has one thread per core (two here); an fsync that takes 10 ms there
/// would stall every actor. The work goes to a fixed pool of threads that may block instead.
/// Dispatch's global queue was the first choice, but on Linux it adds a thread for blocked
/// work only when its monitor notices (about five ran at once): the final flush's saves, meant
/// to overlap their fsyncs, ran five at a time. Idle threads sleep on a condition variable and
/// cost nothing; their stacks are touched only when used.
public enum BlockingIO {
    /// Threads that may block at once: as many as the final flush runs saves at once (64), fewer
    /// when the descriptor limit is tight (`DescriptorBudget.blockingCalls`). Under `ulimit -n 64`
    /// the flush's 64 saves at once ran out of descriptors and sent edits to conflict copies.
    public static let threadCount = DescriptorBudget.measure().blockingCalls

    private static let pool: NIOThreadPool = {
        let pool = NIOThreadPool(numberOfThreads: threadCount)
        pool.start()
        return pool
    }()

    private static let running = Mutex(CallsInFlight())

    /// Runs `body` on a thread that may block, and returns its result.
    ///
    /// The work runs whether or not the calling task is cancelled: a write started is finished.
    public static func run<Result: Sendable, Failure: Error>(
        _ body: @escaping @Sendable () throws(Failure) -> Result
    ) async throws(Failure) -> Result {
        let outcome: Swift.Result<Result, Failure> = await withCheckedContinuation { continuation in
            // The pool is never shut down, so every item runs as `.active`.
            pool.submit { _ in
                let call = running.withLock { $0.start(at: .now) }
                defer { running.withLock { $0.finish(call) } }
                do throws(Failure) {
                    continuation.resume(returning: .success(try body()))
                } catch {
                    continuation.resume(returning: .failure(error))
                }
            }
        }
        return try outcome.get()
    }

    /// The calls running now and how long the oldest has run: what a stop that cannot finish
    /// waits for (`stop-timeout`).
    public static func callsInFlight(at now: ContinuousClock.Instant = .now) -> (count: Int, oldest: Duration?) {
        running.withLock { calls in (calls.started.count, calls.started.values.min().map { now - $0 }) }
    }
}

/// When each call running on `BlockingIO` started, by a number of its own.
private struct CallsInFlight {
    var started: [UInt64: ContinuousClock.Instant] = [:]
    var next: UInt64 = 0

    mutating func start(at now: ContinuousClock.Instant) -> UInt64 {
        next += 1
        started[next] = now
        return next
    }

    mutating func finish(_ call: UInt64) {
        started[call] = nil
    }
}
