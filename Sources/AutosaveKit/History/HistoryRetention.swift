import AutosaveHistory
import Synchronization

/// When history is pruned: a pass some minutes after start, then an hour after the last one while
/// versions keep being recorded, sooner when recording pushed the database over
/// `history.maxBytes`, and never while nothing is recorded.
///
/// An idle agent costs nothing: after a pass that saw no recording since it began, no alarm is
/// armed at all, and the next batch history writes arms one (an hour after the last pass, or at
/// once when that hour is over). Versions age meanwhile, but only recording adds any: a pass
/// after the next recording finds the same ones to drop. Passes never overlap: one armed while
/// another runs waits for its end, and the end of a pass arms the next only when recording went
/// on during it.
final class HistoryRetention<C: Clock>: Sendable where C.Duration == Duration {
    /// How long after start the first pass runs: start-up's own work (the scan, the baseline) first.
    static var firstPassDelay: Duration { .seconds(300) }
    /// Between two passes while versions keep being recorded.
    static var interval: Duration { .seconds(3600) }
    /// Between two passes at least, when recording keeps the database over its cap (a store whose
    /// latest versions alone are over it is pruned once a minute, not after every batch).
    static var overCapSpacing: Duration { .seconds(60) }

    private struct State {
        var lastPassEnd: C.Instant?
        /// When the next pass is armed for; nil: none is.
        var armed: C.Instant?
        var isRunning = false
        /// Something was written since the current (or last) pass began.
        var isDirty = false
        /// The last write left the database over the cap.
        var isOverCap = false
        var isFinished = false
        /// Passes ended so far, and who waits for a number of them (tests).
        var passes = 0
        var passWaiters: [(count: Int, continuation: CheckedContinuation<Void, Never>)] = []
    }

    private let history: VersionHistory
    private let policy: RetentionPolicy
    private let clock: C
    private let alarms: Alarms<C, Int>
    private let state = Mutex(State())
    init(history: VersionHistory, policy: RetentionPolicy, clock: C) {
        self.history = history
        self.policy = policy
        self.clock = clock
        self.alarms = Alarms(clock: clock)
    }

    /// Arms the first pass, hears of history's writes, and runs passes as they fall due until `finish()`.
    func run() async {
        history.writes.observe { [weak self] bytes in self?.wrote(bytesOnDisk: bytes) }
        let first = clock.now.advanced(by: Self.firstPassDelay)
        state.withLock { state in
            guard !state.isFinished, state.armed.map({ first < $0 }) ?? true else { return }
            state.armed = first
            arm(at: first)
        }
        await alarms.run()
    }

    /// Ends `run()`: a pass under way stops after its current step.
    func finish() {
        state.withLock { $0.isFinished = true }
        alarms.finish()
    }

    /// History wrote a batch; the database is now `bytesOnDisk` large.
    func wrote(bytesOnDisk: Int64) {
        let now = clock.now
        state.withLock { state in
            state.isDirty = true
            state.isOverCap = bytesOnDisk > policy.maxBytes
            guard !state.isRunning, !state.isFinished, let due = Self.armNext(&state, now: now) else { return }
            arm(at: due)
        }
    }

    // MARK: - Passes

    /// Arms the next pass as `state` calls for it, unless one is armed as soon: the instant to
    /// arm the alarm for, or nil.
    private static func armNext(_ state: inout State, now: C.Instant) -> C.Instant? {
        guard state.isDirty else { return nil }
        let due: C.Instant
        if let last = state.lastPassEnd {
            due = max(now, last.advanced(by: state.isOverCap ? overCapSpacing : interval))
        } else if state.isOverCap {
            // Before the first pass: over the cap cannot wait for it.
            due = now
        } else {
            return nil
        }
        if let armed = state.armed, armed <= due { return nil }
        state.armed = due
        return due
    }

    /// Sets the alarm; called under `state`'s lock, so two armings land in the order they were decided.
    private func arm(at instant: C.Instant) {
        alarms.arm(0, at: instant) { [self] in await pass() }
    }

    private func pass() async {
        let isStarted = state.withLock { state -> Bool in
            state.armed = nil
            guard !state.isFinished else { return false }
            state.isRunning = true
            state.isDirty = false
            return true
        }
        guard isStarted else { return }
        let report = await history.prune(policy) { [self] in state.withLock { $0.isFinished } }
        let now = clock.now
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.isRunning = false
            state.lastPassEnd = now
            state.passes += 1
            if let report, report.bytesAfter <= policy.maxBytes { state.isOverCap = false }
            if !state.isFinished, let due = Self.armNext(&state, now: now) { arm(at: due) }
            let passes = state.passes
            defer { state.passWaiters.removeAll { $0.count <= passes } }
            return state.passWaiters.filter { $0.count <= passes }.map(\.continuation)
        }
        for waiter in waiters { waiter.resume() }
    }

    // MARK: - For tests

    /// When the next pass is armed for; nil when none is (the agent is idle).
    var armedInstant: C.Instant? { state.withLock { $0.armed } }

    /// Returns once `count` passes have ended (failed ones too), and the next is armed or not.
    func waitForPasses(_ count: Int) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let isDone = state.withLock { state in
                if state.passes >= count { return true }
                state.passWaiters.append((count, continuation))
                return false
            }
            if isDone { continuation.resume() }
        }
    }
}
