@testable import AutosaveKit
import AutosaveTestKit
import Testing

@Suite struct AutosaveScheduleTests {
    typealias Instant = ManualClock.Instant
    func at(_ milliseconds: Int) -> Instant { Instant(offset: .milliseconds(milliseconds)) }

    func schedule() -> AutosaveSchedule<Instant> { AutosaveSchedule(delay: .milliseconds(1000), maxDelay: .milliseconds(10_000)) }

    @Test func nothingIsDueWhileClean() {
        #expect(schedule().deadline == nil)
    }

    @Test func eachEditPushesTheSaveToDelayAfterIt() {
        var schedule = schedule()
        schedule.edited(at: at(0))
        #expect(schedule.deadline == at(1000))
        schedule.edited(at: at(700))
        #expect(schedule.deadline == at(1700))
    }

    @Test func theMaximumDelayCapsContinuousEdits() {
        var schedule = schedule()
        for time in stride(from: 0, through: 9_500, by: 500) { schedule.edited(at: at(time)) }
        #expect(schedule.deadline == at(10_000))
    }

    /// A file appended to every 20 ms made every save find it changed; each merge opened a new
    /// window, and the edit waited until the appends stopped.
    @Test func savesThatFindTheFileChangedKeepTheirEditsFirstMoment() {
        var schedule = schedule()
        schedule.edited(at: at(0))
        var time = 1000
        while time < 20_000, let due = schedule.deadline, due.offset <= .milliseconds(time) {
            schedule.saveStarted()
            schedule.saveFoundFileChanged(at: at(time))
            time += 1000
        }
        #expect(schedule.deadline == at(10_000), "still due maxDelay after the first unsaved edit")
    }

    @Test func cleaningCancelsEverything() {
        var schedule = schedule()
        schedule.edited(at: at(0))
        schedule.cleaned()
        #expect(schedule.deadline == nil)
    }

    @Test func editsDuringASaveOpenANewWindow() {
        var schedule = schedule()
        schedule.edited(at: at(0))
        schedule.saveStarted()
        #expect(schedule.deadline == nil)
        schedule.edited(at: at(1200))
        schedule.saveSucceeded()
        #expect(schedule.deadline == at(2200))
    }

    @Test func failuresBackOffFrom100MillisecondsTo30Seconds() {
        #expect(AutosaveSchedule<Instant>.backoff(afterFailures: 1) == .milliseconds(100))
        #expect(AutosaveSchedule<Instant>.backoff(afterFailures: 2) == .milliseconds(200))
        #expect(AutosaveSchedule<Instant>.backoff(afterFailures: 5) == .milliseconds(1600))
        #expect(AutosaveSchedule<Instant>.backoff(afterFailures: 9) == .milliseconds(25_600))
        #expect(AutosaveSchedule<Instant>.backoff(afterFailures: 10) == .seconds(30))
        #expect(AutosaveSchedule<Instant>.backoff(afterFailures: 500) == .seconds(30))
        var schedule = schedule()
        schedule.edited(at: at(0))
        #expect(schedule.saveFailed(at: at(1000)) == at(1100))
        schedule.edited(at: at(1050))
        #expect(schedule.deadline == at(1100), "edits do not hurry or delay a retry")
        #expect(schedule.saveFailed(at: at(1100)) == at(1300))
        schedule.saveSucceeded()
        #expect(schedule.failures == 0)
    }
}

@Suite struct BufferOrderingTests {
    @Test func writesArrivingDuringTheFirstReadAreNotLost() async throws {
        let harness = try await WorkspaceHarness(files: ["a.txt": String(repeating: "disk\n", count: 50_000)])
        async let first = harness.write("a.txt", "first")
        async let second = harness.workspace.open("a.txt")
        let revision = try await first
        _ = try await second
        #expect(revision == 1)
        #expect(try await harness.text("a.txt") == "first")
        await harness.stop()
    }

    @Test func concurrentClientsAllLand() async throws {
        let harness = try await WorkspaceHarness(files: ["a.txt": "x"])
        try await withThrowingTaskGroup { group in
            for index in 0..<200 {
                group.addTask { _ = try await harness.write("a.txt", "client \(index)") }
            }
            try await group.waitForAll()
        }
        #expect(try await harness.workspace.read("a.txt").revision == 200)
        try await harness.workspace.saveAll()
        let onDisk = try harness.project.read("a.txt")
        #expect(try await harness.text("a.txt") == onDisk)
        await harness.stop()
    }
}
