@testable import AutosaveKit
import Foundation
import Testing

@Suite struct BlockingIOTests {
    /// The final flush relies on it: its saves block in fsync together, so they must not queue
    /// behind a handful of threads (Dispatch's global queue ran about five at once).
    @Test func blockingCallsRunTogetherUpToTheThreadCount() async {
        let count = BlockingIO.threadCount / 2
        // Generous, and counted from the first call in: with two cores the tasks that hand the
        // calls over queue behind every other test's work (5 s was missed in CI, and 30 s from
        // before the first task ran on a machine also compiling). Calls that cannot run
        // together never all arrive, however long they wait.
        let gate = Gate(expected: count, patience: 30)
        let allMet = await withTaskGroup(of: Bool.self) { group in
            for _ in 0..<count { group.addTask { await BlockingIO.run { gate.arriveAndWait() } } }
            var allMet = true
            for await met in group { allMet = allMet && met }
            return allMet
        }
        #expect(allMet, "\(count) blocking calls did not all run at once within 30 s")
    }
}

/// Blocks each caller until `expected` callers are inside at once, or `patience` passes after the first.
private final class Gate: @unchecked Sendable {
    private let condition = NSCondition()
    private var arrived = 0
    private let expected: Int
    private let patience: TimeInterval
    /// Set by the first caller in: `patience` seconds after it.
    private var deadline: Date?

    init(expected: Int, patience: TimeInterval) {
        self.expected = expected
        self.patience = patience
    }

    /// Whether every caller arrived within `patience` of the first.
    func arriveAndWait() -> Bool {
        condition.lock()
        defer { condition.unlock() }
        let deadline = self.deadline ?? Date().addingTimeInterval(patience)
        self.deadline = deadline
        arrived += 1
        if arrived == expected { condition.broadcast() }
        while arrived < expected, condition.wait(until: deadline) {}
        return arrived >= expected
    }
}
