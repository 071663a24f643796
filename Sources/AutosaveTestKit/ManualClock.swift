import Synchronization

/// A clock that moves only when a test advances it.
///
/// Code under test sleeps on it as on any `Clock`; `advance(by:)` wakes every sleeper whose
/// deadline has come. `waitForSleepers(_:)` lets a test wait until the code is actually asleep,
/// which is what makes timing tests deterministic under CPU load.
public final class ManualClock: Clock, Sendable {
    public struct Instant: InstantProtocol {
        public var offset: Duration
        public init(offset: Duration) { self.offset = offset }
        public func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }
        public func duration(to other: Instant) -> Duration { other.offset - offset }
        public static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.offset < rhs.offset }
    }

    private struct Sleeper {
        var id: Int
        var deadline: Instant
        var continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var now = Instant(offset: .zero)
        var sleepers: [Sleeper] = []
        var nextID = 0
        /// Tests waiting for the number of sleepers to reach a bound (at least, or at most).
        var sleeperWaiters: [(isReady: @Sendable (Int) -> Bool, continuation: CheckedContinuation<Void, Never>)] = []

        /// Takes the waiters the current number of sleepers satisfies.
        mutating func readyWaiters() -> [CheckedContinuation<Void, Never>] {
            let count = sleepers.count
            let ready = sleeperWaiters.filter { $0.isReady(count) }.map(\.continuation)
            sleeperWaiters.removeAll { $0.isReady(count) }
            return ready
        }
    }

    private let state = Mutex(State())

    public init() {}

    public var now: Instant { state.withLock { $0.now } }
    public var minimumResolution: Duration { .nanoseconds(1) }

    /// How many tasks are sleeping on the clock right now.
    public var sleeperCount: Int { state.withLock { $0.sleepers.count } }

    public func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        let id = state.withLock { state in
            defer { state.nextID += 1 }
            return state.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let waiters: [CheckedContinuation<Void, Never>]? = state.withLock { state in
                    if deadline <= state.now || Task.isCancelled { return nil }
                    state.sleepers.append(Sleeper(id: id, deadline: deadline, continuation: continuation))
                    return state.readyWaiters()
                }
                guard let waiters else {
                    if Task.isCancelled { continuation.resume(throwing: CancellationError()) } else { continuation.resume() }
                    return
                }
                for waiter in waiters { waiter.resume() }
            }
        } onCancel: {
            let (cancelled, waiters) = state.withLock { state -> (CheckedContinuation<Void, any Error>?, [CheckedContinuation<Void, Never>]) in
                guard let index = state.sleepers.firstIndex(where: { $0.id == id }) else { return (nil, []) }
                let sleeper = state.sleepers.remove(at: index)
                return (sleeper.continuation, state.readyWaiters())
            }
            cancelled?.resume(throwing: CancellationError())
            for waiter in waiters { waiter.resume() }
        }
    }

    /// Moves time forward and wakes the sleepers whose deadline has come.
    public func advance(by duration: Duration) {
        let (due, waiters) = state.withLock { state -> ([CheckedContinuation<Void, any Error>], [CheckedContinuation<Void, Never>]) in
            state.now = state.now.advanced(by: duration)
            let now = state.now
            let due = state.sleepers.filter { $0.deadline <= now }
            state.sleepers.removeAll { $0.deadline <= now }
            return (due.sorted { $0.deadline < $1.deadline }.map(\.continuation), state.readyWaiters())
        }
        for continuation in due { continuation.resume() }
        for waiter in waiters { waiter.resume() }
    }

    /// Returns once at least `count` tasks are sleeping on the clock.
    public func waitForSleepers(_ count: Int = 1) async {
        await waitForSleepers { $0 >= count }
    }

    /// Returns once at most `count` tasks are sleeping on the clock (a sleep cancelled or woken).
    public func waitForSleepers(atMost count: Int) async {
        await waitForSleepers { $0 <= count }
    }

    private func waitForSleepers(until isReady: @escaping @Sendable (Int) -> Bool) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let ready = state.withLock { state in
                if isReady(state.sleepers.count) { return true }
                state.sleeperWaiters.append((isReady, continuation))
                return false
            }
            if ready { continuation.resume() }
        }
    }
}
