@testable import AutosaveKit
import AutosaveTestKit
import Testing

/// "What changed since?" answered from the ledger: the class of bug is a client that resumes
/// with its last clock and misses a change (an answer silently short), or is told of one twice
/// in one answer. The property: for any sequence of changes, losses and questions, an answer is
/// either exactly the latest change of every path changed after the clock (in order), or `fresh`
/// — and `fresh` only when something after the clock was lost or forgotten.
@Suite struct ChangeLedgerTests {
    @Test func aClientThatResumesWithItsLastClockMissesNothing() {
        for seed in 0..<200 as Range<UInt64> {
            var random = SplitMix64(seed: seed)
            let capacity = 4 + random.below(40)
            var ledger = ChangeLedger(instance: "00000000000000aa", capacity: capacity)
            // The model: every change ever, in order, and the sequences at which something was lost.
            var history: [(sequence: UInt64, path: String, kind: FileChange.Kind)] = []
            var losses: [UInt64] = []
            var clients: [ChangeClock?] = [nil, ledger.clock]
            let paths = (0..<(2 + random.below(30))).map { "d\($0 % 3)/f\($0)" }
            for _ in 0..<(50 + random.below(300)) {
                switch random.below(20) {
                case 0:
                    ledger.markLost()
                    losses.append(ledger.sequence)
                case 1...3:
                    let index = random.below(clients.count)
                    let since = clients[index]
                    let answer = ledger.changes(since: since)
                    if let since, !answer.isFresh {
                        let expected = Self.latest(after: since.sequence, in: history)
                        #expect(answer.changes.map(\.path) == expected.map(\.path), "seed \(seed)")
                        #expect(answer.changes.map(\.kind) == expected.map(\.kind), "seed \(seed)")
                    } else if let since {
                        let lostSince = losses.contains { $0 > since.sequence }
                        let paths = Set(history.filter { $0.sequence > since.sequence }.map(\.path))
                        // Fresh without a loss only when more paths changed than are kept.
                        #expect(lostSince || paths.count > capacity / 2, "seed \(seed): fresh for no reason")
                    } else {
                        #expect(answer.isFresh, "a first question is answered fresh")
                    }
                    #expect(answer.clock == ledger.clock)
                    clients[index] = answer.clock
                case 4: clients.append(ledger.clock)
                default:
                    let path = paths[random.below(paths.count)]
                    let kinds: [FileChange.Kind] = [.created, .modified, .removed, .moved]
                    let kind = kinds[random.below(kinds.count)]
                    ledger.record(path, kind)
                    history.append((ledger.sequence, path, kind))
                }
                #expect(ledger.count <= capacity, "seed \(seed): the ledger holds more paths than its capacity")
            }
        }
    }

    @Test func aClockFromAnotherRunOrNotAClockIsAnsweredFresh() {
        var ledger = ChangeLedger(instance: "00000000000000aa")
        ledger.record("a", .created)
        let other = ChangeClock(instance: "00000000000000bb", sequence: 0)
        #expect(ledger.changes(since: other).isFresh)
        #expect(ChangeClock(token: "autosave:none:0") == nil)
        #expect(ChangeClock(token: "c:1234:5") == nil)
        #expect(ChangeClock(token: "autosave:00000000000000aa:1") == ChangeClock(instance: "00000000000000aa", sequence: 1))
        // A clock from this run's future (a client that made one up) is not trusted either.
        #expect(ledger.changes(since: ChangeClock(instance: "00000000000000aa", sequence: 99)).isFresh)
        #expect(ChangeClock.newInstance() != ChangeClock.newInstance())
    }

    @Test func folderWatchesMissingMakeEveryAnswerFresh() {
        var ledger = ChangeLedger(instance: "00000000000000aa")
        let clock = ledger.clock
        ledger.record("a", .created)
        ledger.isPartial = true
        #expect(ledger.changes(since: clock).isFresh)
        ledger.isPartial = false
        #expect(ledger.changes(since: clock).changes.map(\.path) == ["a"])
    }

    /// The latest change of each path changed after `sequence`, in the order of those changes.
    private static func latest(
        after sequence: UInt64, in history: [(sequence: UInt64, path: String, kind: FileChange.Kind)]
    ) -> [(path: String, kind: FileChange.Kind)] {
        var last: [String: (UInt64, FileChange.Kind)] = [:]
        for entry in history where entry.sequence > sequence { last[entry.path] = (entry.sequence, entry.kind) }
        return last.sorted { $0.value.0 < $1.value.0 }.map { ($0.key, $0.value.1) }
    }
}
