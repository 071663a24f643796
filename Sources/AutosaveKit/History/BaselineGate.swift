import Synchronization

/// When the history baseline may begin (`ready` is out) and when it must end (the agent stops).
final class BaselineGate: Sendable {
    private struct State {
        var isOpen = false
        var isStopping = false
        var waiter: CheckedContinuation<Bool, Never>?
    }

    private let state = Mutex(State())

    /// `ready` is out: the baseline may begin.
    func open() {
        let waiter = state.withLock { state in
            state.isOpen = true
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(returning: true)
    }

    /// The agent stops: a baseline that has not begun never will, one running ends after its batch.
    func stop() {
        let waiter = state.withLock { state in
            state.isStopping = true
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(returning: false)
    }

    /// Whether `stop()` was called.
    var isStopping: Bool { state.withLock { $0.isStopping } }

    /// Waits for `open()`; false when `stop()` came first. One waiter at a time.
    func waitUntilOpen() async -> Bool {
        await withCheckedContinuation { continuation in
            let answer: Bool? = state.withLock { state in
                if state.isStopping { return false }
                if state.isOpen { return true }
                state.waiter = continuation
                return nil
            }
            if let answer { continuation.resume(returning: answer) }
        }
    }
}
