@testable import AutosaveKit
import AutosaveTestKit
import Foundation
import Synchronization
import Testing

/// The one task behind every autosave timer (and the watcher's): an alarm fires once, at its
/// instant and not before, never once dropped or moved; one owner's slow work never holds up
/// another's; and nothing sleeps while nothing is armed.
@Suite(.timeLimit(.minutes(1))) struct AlarmsTests {
    typealias Instant = ManualClock.Instant

    /// What fired, and when, in the order the work ran.
    final class Firings: Sendable {
        private struct State {
            var fired: [(key: String, at: Instant)] = []
            var waiters: [(count: Int, continuation: CheckedContinuation<Void, Never>)] = []
        }
        private let state = Mutex(State())
        var all: [(key: String, at: Instant)] { state.withLock { $0.fired } }
        var keys: [String] { all.map(\.key) }

        func record(_ key: String, at instant: Instant) {
            let ready = state.withLock { state in
                state.fired.append((key, instant))
                let count = state.fired.count
                defer { state.waiters.removeAll { $0.count <= count } }
                return state.waiters.filter { $0.count <= count }.map(\.continuation)
            }
            for waiter in ready { waiter.resume() }
        }

        /// Returns once `count` firings were recorded.
        func wait(for count: Int) async {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let isReady = state.withLock { state in
                    if state.fired.count >= count { return true }
                    state.waiters.append((count, continuation))
                    return false
                }
                if isReady { continuation.resume() }
            }
        }
    }

    func at(_ milliseconds: Int) -> Instant { Instant(offset: .milliseconds(milliseconds)) }

    func arm(_ alarms: Alarms<ManualClock, String>, _ key: String, at milliseconds: Int, clock: ManualClock, into firings: Firings) {
        alarms.arm(key, at: at(milliseconds)) { firings.record(key, at: clock.now) }
    }

    @Test func manyAlarmsShareOneSleeperAndFireInTheirOrder() async throws {
        let clock = ManualClock()
        let alarms = Alarms<ManualClock, String>(clock: clock)
        let firings = Firings()
        async let running: Void = alarms.run()
        for (key, milliseconds) in [("c", 30), ("a", 10), ("b", 20)] {
            arm(alarms, key, at: milliseconds, clock: clock, into: firings)
        }
        await clock.waitForSleepers(1)
        #expect(clock.sleeperCount == 1, "three armed alarms cost one sleeping task")
        clock.advance(by: .milliseconds(9))
        clock.advance(by: .milliseconds(6))
        await firings.wait(for: 1)
        #expect(firings.keys == ["a"])
        await clock.waitForSleepers(1)
        clock.advance(by: .milliseconds(20))
        await firings.wait(for: 3)
        #expect(firings.keys == ["a", "b", "c"])
        #expect(firings.all.allSatisfy { $0.at >= at(["a": 10, "b": 20, "c": 30][$0.key]!) }, "none fired before its instant")
        alarms.finish()
        await running
        #expect(clock.sleeperCount == 0)
    }

    @Test func nothingSleepsWhileNothingIsArmed() async throws {
        let clock = ManualClock()
        let alarms = Alarms<ManualClock, String>(clock: clock)
        let firings = Firings()
        async let running: Void = alarms.run()
        arm(alarms, "a", at: 10, clock: clock, into: firings)
        await clock.waitForSleepers(1)
        alarms.disarm("a")
        // The sleep served only the dropped alarm: it goes, and no task is left to wake.
        await clock.waitForSleepers(atMost: 0)
        clock.advance(by: .milliseconds(50))
        alarms.finish()
        await running
        #expect(firings.keys.isEmpty, "a dropped alarm never fires")
    }

    @Test func anAlarmMovedSoonerFiresThenAndNotAgain() async throws {
        let clock = ManualClock()
        let alarms = Alarms<ManualClock, String>(clock: clock)
        let firings = Firings()
        async let running: Void = alarms.run()
        arm(alarms, "a", at: 100, clock: clock, into: firings)
        await clock.waitForSleepers(1)
        arm(alarms, "a", at: 10, clock: clock, into: firings)
        // The sleep for 100 ms gives way to one for 10 ms.
        clock.advance(by: .milliseconds(10))
        await firings.wait(for: 1)
        clock.advance(by: .milliseconds(200))
        alarms.finish()
        await running
        #expect(firings.all.map(\.key) == ["a"])
        #expect(firings.all.first?.at == at(10))
    }

    @Test func slowWorkDoesNotHoldUpAnotherAlarm() async throws {
        let clock = ManualClock()
        let alarms = Alarms<ManualClock, String>(clock: clock)
        let firings = Firings()
        let (gate, opener) = AsyncStream.makeStream(of: Void.self)
        async let running: Void = alarms.run()
        alarms.arm("slow", at: at(10)) {
            firings.record("slow started", at: clock.now)
            for await _ in gate { break }
            firings.record("slow finished", at: clock.now)
        }
        arm(alarms, "quick", at: 20, clock: clock, into: firings)
        clock.advance(by: .milliseconds(10))
        await firings.wait(for: 1)
        await clock.waitForSleepers(1)
        clock.advance(by: .milliseconds(10))
        await firings.wait(for: 2)
        #expect(firings.keys == ["slow started", "quick"])
        alarms.finish()
        opener.yield()
        // run() returns only once the work it started has finished.
        await running
        #expect(firings.keys == ["slow started", "quick", "slow finished"])
    }

    @Test func alarmsArmedBeforeRunFireOnceItRuns() async throws {
        let clock = ManualClock()
        let alarms = Alarms<ManualClock, String>(clock: clock)
        let firings = Firings()
        arm(alarms, "a", at: 10, clock: clock, into: firings)
        clock.advance(by: .milliseconds(20))
        async let running: Void = alarms.run()
        await firings.wait(for: 1)
        alarms.finish()
        await running
        #expect(firings.keys == ["a"])
    }

    /// Random arms, moves, drops and clock steps against a model: each key fires exactly when the
    /// model says (its last arming, not dropped, reached), never early, never twice.
    @Test func randomArmsAndStepsFireAsTheModelSays() async throws {
        let cases = ProcessInfo.processInfo.environment["AUTOSAVE_PROPERTY_CASES"].flatMap(Int.init) ?? 40
        for seed in 0..<UInt64(cases) {
            var random = SplitMix64(seed: seed)
            let clock = ManualClock()
            let alarms = Alarms<ManualClock, String>(clock: clock)
            let firings = Firings()
            var armed: [String: Int] = [:]
            var expected: [(key: String, at: Int)] = []
            var now = 0
            await withDiscardingTaskGroup { group in
                group.addTask { await alarms.run() }
                for _ in 0..<(10 + random.below(30)) {
                    let key = ["a", "b", "c", "d"][random.below(4)]
                    switch random.below(3) {
                    case 0:
                        let instant = now + random.below(50)
                        armed[key] = instant
                        arm(alarms, key, at: instant, clock: clock, into: firings)
                    case 1:
                        armed[key] = nil
                        alarms.disarm(key)
                    default:
                        now += random.below(40)
                        clock.advance(by: .milliseconds(now) - clock.now.offset)
                        let due = armed.filter { $0.value <= now }
                        for (key, instant) in due.sorted(by: { $0.value < $1.value }) {
                            expected.append((key, instant))
                            armed[key] = nil
                        }
                        // The firings this step makes due have run before the next step re-arms.
                        await firings.wait(for: expected.count)
                    }
                }
                alarms.finish()
            }
            let fired = firings.all
            #expect(fired.map(\.key).sorted() == expected.map(\.key).sorted(), "seed \(seed): fired \(fired.map(\.key)), the model says \(expected.map(\.key))")
            for key in Set(expected.map(\.key)) {
                let times = fired.filter { $0.key == key }.map(\.at)
                let instants = expected.filter { $0.key == key }.map(\.at)
                for (time, instant) in zip(times, instants) {
                    #expect(time >= at(instant), "seed \(seed): \(key) fired at \(time.offset), before its instant \(instant) ms")
                }
            }
        }
    }
}
