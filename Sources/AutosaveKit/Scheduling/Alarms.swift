import Synchronization

/// Timers for many owners served by one sleeping task: every buffer's autosave timer, or the
/// watcher's settle and rescan timers.
///
/// An owner arms at most one alarm under its key; arming again moves it, `disarm` drops it.
/// `run()` sleeps until the earliest armed instant, then starts each due alarm's work as a child
/// of its own task group, so a slow save never holds another owner's alarm up, and every piece
/// of work ends before `run()` returns. While nothing is armed nothing sleeps: the one task waits
/// on a continuation, and costs no wake-up.
///
/// Guarantees: an alarm fires at most once per arming, never before its instant, and not at all
/// once disarmed or moved before it fired. Work already started when it is disarmed runs on;
/// owners that care pass the instant they armed, and ignore a firing they no longer expect.
final class Alarms<C: Clock, Key: Hashable & Sendable>: Sendable {
    /// What an alarm runs when it fires.
    typealias Work = @Sendable () async -> Void

    private struct Alarm {
        var instant: C.Instant
        var work: Work
    }

    private struct State {
        var alarms: [Key: Alarm] = [:]
        /// The instant `run()` sleeps until (nil: it waits for an alarm to be armed).
        var plannedWake: C.Instant?
        /// `run()` waiting for a sooner alarm than the one it sleeps for.
        var replanWaiter: CheckedContinuation<Void, Never>?
        /// A sooner alarm came while `run()` was between its waits.
        var isReplanDue = false
        var isFinished = false

        /// Tells `run()` to work out its next wake again: the waiter to resume, or a note for later.
        mutating func replan() -> CheckedContinuation<Void, Never>? {
            guard let waiter = replanWaiter else {
                isReplanDue = true
                return nil
            }
            replanWaiter = nil
            return waiter
        }
    }

    private let clock: C
    private let state = Mutex(State())

    init(clock: C) {
        self.clock = clock
    }

    /// Sets `key`'s alarm for `instant`, in place of any it had.
    func arm(_ key: Key, at instant: C.Instant, work: @escaping Work) {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            state.alarms[key] = Alarm(instant: instant, work: work)
            guard state.plannedWake.map({ instant < $0 }) ?? true else { return nil }
            return state.replan()
        }
        waiter?.resume()
    }

    /// Drops `key`'s alarm, if one is armed.
    func disarm(_ key: Key) {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard let dropped = state.alarms.removeValue(forKey: key) else { return nil }
            // The sleep was for this alarm: sleep for the next one instead of waking for nothing.
            guard dropped.instant == state.plannedWake else { return nil }
            return state.replan()
        }
        waiter?.resume()
    }

    /// Ends `run()` once the work already started has finished; alarms armed later never fire.
    func finish() {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            state.isFinished = true
            state.alarms.removeAll()
            return state.replan()
        }
        waiter?.resume()
    }

    /// Fires alarms as they fall due, until `finish()` or until the calling task is cancelled.
    func run() async {
        await withDiscardingTaskGroup { group in
            while !Task.isCancelled {
                let wake = state.withLock { state -> C.Instant?? in
                    if state.isFinished { return .none }
                    state.isReplanDue = false
                    state.plannedWake = state.alarms.values.lazy.map(\.instant).min()
                    return .some(state.plannedWake)
                }
                guard let wake else { return }
                await sleep(until: wake)
                let now = clock.now
                let due = state.withLock { state -> [Alarm] in
                    let due = state.alarms.filter { $0.value.instant <= now }
                    for key in due.keys { state.alarms[key] = nil }
                    state.plannedWake = nil
                    return due.values.sorted { $0.instant < $1.instant }
                }
                for alarm in due { group.addTask { await alarm.work() } }
            }
        }
    }

    /// Sleeps until `instant`, or until a sooner alarm is armed (or none is, with nil).
    private func sleep(until instant: C.Instant?) async {
        await withTaskGroup(of: Void.self) { race in
            if let instant {
                race.addTask { [clock] in try? await clock.sleep(until: instant, tolerance: nil) }
            }
            race.addTask { await self.untilReplanned() }
            await race.next()
            race.cancelAll()
        }
    }

    private func untilReplanned() async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let isDue = state.withLock { state in
                    if state.isReplanDue || state.isFinished || Task.isCancelled { return true }
                    state.replanWaiter = continuation
                    return false
                }
                if isDue { continuation.resume() }
            }
        } onCancel: {
            let waiter = state.withLock { state in
                defer { state.replanWaiter = nil }
                return state.replanWaiter
            }
            waiter?.resume()
        }
    }
}
