import CAutosaveShims
import NIOPosix

/// One thread at the lowest CPU priority (nice 19) and in the idle I/O class, for background work
/// that must yield to everything else the agent and the user do (the history baseline).
///
/// Priorities on Linux belong to threads, and an unprivileged thread cannot raise its own again:
/// the work gets a thread of its own, never one of `BlockingIO`'s, which would stay lowered for the
/// saves that later ran on it. The thread lives from `init` to `shutDown()`; work runs on it one
/// call after another, in the order given.
final class IdleThread: Sendable {
    private let pool = NIOThreadPool(numberOfThreads: 1)

    init() {
        pool.start()
        // The first work the thread does, so everything after runs lowered.
        pool.submit { _ in _ = CAutosaveShims_lowerThreadPriority() }
    }

    /// Runs `body` on the thread and returns its result; it runs whether or not the caller is cancelled.
    func run<Result: Sendable>(_ body: @escaping @Sendable () -> Result) async -> Result {
        await withCheckedContinuation { continuation in
            pool.submit { _ in continuation.resume(returning: body()) }
        }
    }

    /// Ends the thread once the work given so far is done.
    func shutDown() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            pool.shutdownGracefully { _ in continuation.resume() }
        }
    }
}
