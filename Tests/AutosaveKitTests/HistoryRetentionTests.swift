@testable import AutosaveKit
import AutosaveHistory
import AutosaveTestKit
import Foundation
import Logging
import Testing

/// When the agent prunes history, on a manual clock: some minutes after start, then hourly while
/// versions keep coming, at once when recording pushed the database over its cap, and never while
/// nothing is recorded (no alarm armed, nothing asleep on the clock).
@Suite(.timeLimit(.minutes(1))) struct HistoryRetentionTests {
    /// A history on a real database in a temporary folder, its wall clock and its retention both
    /// driven by one manual clock.
    final class Harness: Sendable {
        let directory: TemporaryDirectory
        let clock = ManualClock()
        let logs = AsyncRecorder<CapturedLog>()
        let history: VersionHistory
        let retention: HistoryRetention<ManualClock>
        let tasks: [Task<Void, Never>]
        /// The wall clock at the manual clock's zero, in milliseconds since the epoch.
        static let epoch: Int64 = 1_800_000_000_000

        init(policy: RetentionPolicy = RetentionPolicy()) throws {
            directory = try TemporaryDirectory(prefix: "autosave-retention")
            let path = directory.url("history.sqlite")
            let clock = self.clock
            history = VersionHistory(
                database: HistoryDatabase(path: path, store: try VersionStore(path: path)),
                files: HistoryFiles(resolver: PathResolver(root: directory.path, stateDirectory: nil), maxFileBytes: 1 << 20),
                writers: EditWriters(), logger: LogCapture.logger(logs),
                now: { Self.epoch + clock.now.offset.wholeMilliseconds })
            retention = HistoryRetention(history: history, policy: policy, clock: clock)
            let history = self.history, retention = self.retention
            tasks = [Task { await history.run() }, Task { await retention.run() }]
        }

        /// Hands a save of `path` over and waits until it is written.
        func save(_ path: String, _ bytes: [UInt8]) async {
            history.saved(path, bytes: bytes)
            await history.caughtUp()
        }

        /// `count` bytes from a seeded generator: incompressible, so each version costs its size.
        static func randomBytes(_ count: Int, seed: UInt64) -> [UInt8] {
            var random = SplitMix64(seed: seed)
            return (0..<count).map { _ in UInt8(truncatingIfNeeded: random.next()) }
        }

        func versions(_ path: String) async throws -> [Version] {
            try await history.versions(at: path)
        }

        /// Returns once retention's `run()` has armed the first pass.
        func waitUntilStarted() async throws {
            for _ in 0..<1_000_000 where retention.armedInstant == nil { await Task.yield() }
            try #require(retention.armedInstant != nil, "retention armed its first pass")
        }

        /// Returns once `count` passes have ended; throws (instead of hanging) when the passes'
        /// log lines do not come within ten seconds.
        func waitForPasses(_ count: Int) async throws {
            try await logs.wait(timeout: .seconds(10), "\(count) passes") { logs in
                logs.filter { $0.event == "history-pruned" || $0.event == "history-failed" }.count >= count
            }
            await retention.waitForPasses(count)
        }

        func stop() async {
            retention.finish()
            history.finish()
            for task in tasks { await task.value }
        }
    }

    @Test func aPassRunsMinutesAfterStartThenHourlyWhileVersionsComeAndNeverWhileIdle() async throws {
        let harness = try Harness()
        try await harness.waitUntilStarted()
        // Two versions of a file a minute apart: once both are over an hour old, the older goes.
        await harness.save("a.txt", Array("one\n".utf8))
        harness.clock.advance(by: .seconds(60))
        await harness.save("a.txt", Array("two\n".utf8))
        #expect(harness.retention.armedInstant == ManualClock.Instant(offset: HistoryRetention<ManualClock>.firstPassDelay))

        harness.clock.advance(by: HistoryRetention<ManualClock>.firstPassDelay)
        try await harness.waitForPasses(1)
        let first = try #require(harness.logs.elements.first { $0.event == "history-pruned" })
        #expect(first.fields["versions"] == "0", "both versions are younger than an hour")
        #expect(harness.retention.armedInstant == nil && harness.clock.sleeperCount == 0, "nothing recorded since: nothing armed")

        // A day of idleness: no pass, and no wake-up for one.
        harness.clock.advance(by: .seconds(86_400))
        #expect(harness.retention.armedInstant == nil && harness.clock.sleeperCount == 0)
        #expect(harness.logs.elements.filter { $0.event == "history-pruned" }.count == 1)

        // A recording arms the next pass; its hour since the last pass is over, so it is due now.
        await harness.save("b.txt", Array("b\n".utf8))
        try await harness.waitForPasses(2)
        #expect(try await harness.versions("a.txt").count == 1, "the older of a.txt's versions of the same hour went")
        let second = harness.logs.elements.filter { $0.event == "history-pruned" }.last
        #expect(second?.fields["versions"] == "1" && second?.fields["contents"] == "1")
        #expect(harness.retention.armedInstant == nil, "nothing recorded during that pass either")

        // Recorded again right after: the next pass waits for the hour.
        await harness.save("b.txt", Array("b2\n".utf8))
        let due = try #require(harness.retention.armedInstant)
        #expect(due == harness.clock.now.advanced(by: HistoryRetention<ManualClock>.interval))
        harness.clock.advance(by: .seconds(3599))
        #expect(harness.logs.elements.filter { $0.event == "history-pruned" }.count == 2, "not before the hour")
        harness.clock.advance(by: .seconds(1))
        try await harness.waitForPasses(3)
        await harness.stop()
    }

    @Test func recordingOverTheCapPrunesAtOnceThenAtMostOnceAMinute() async throws {
        let cap: Int64 = 256 << 10
        let harness = try Harness(policy: RetentionPolicy(maxBytes: cap))
        try await harness.waitUntilStarted()
        // Incompressible versions, all younger than an hour, so that only the cap drops any; the
        // clock never reaches the first pass's five minutes.
        for index in 0..<21 {
            await harness.save("f\(index % 3)", Harness.randomBytes(16 << 10, seed: UInt64(index)))
        }
        try await harness.waitForPasses(1)
        // Recording may have gone on over the cap during that pass: the next waits a minute.
        var passes = 1
        while let armed = harness.retention.armedInstant, passes < 10 {
            #expect(armed == harness.clock.now.advanced(by: HistoryRetention<ManualClock>.overCapSpacing))
            harness.clock.advance(by: HistoryRetention<ManualClock>.overCapSpacing)
            passes += 1
            try await harness.waitForPasses(passes)
        }
        #expect(harness.retention.armedInstant == nil)
        #expect(harness.history.database.bytesOnDisk <= cap, "history.sqlite and its WAL: \(harness.history.database.bytesOnDisk) bytes")
        for path in ["f0", "f1", "f2"] {
            let latest = try await harness.history.content(of: path, at: .back(0))
            #expect(latest.content?.count == 16 << 10, "\(path)'s latest version stays")
        }
        let versions = try await harness.history.versions(at: "")
        #expect(versions.count < 21 && versions.count >= 3)
        let dropped = harness.logs.elements.filter { $0.event == "history-pruned" }.compactMap { Int($0.fields["versions"] ?? "") }
        #expect(dropped.reduce(0, +) == 21 - versions.count, "the log lines count what went: \(dropped)")
        await harness.stop()
    }

    @Test func theWorkspaceRunsRetentionUnderItsOwnRun() async throws {
        let harness = try await WorkspaceHarness(files: ["a.txt": "a\n"])
        let retention = try #require(await harness.workspace.historyRetention, "history is on by default")
        for _ in 0..<1_000_000 where retention.armedInstant == nil { await Task.yield() }
        #expect(retention.armedInstant == harness.clock.now.advanced(by: HistoryRetention<ManualClock>.firstPassDelay))
        harness.clock.advance(by: HistoryRetention<ManualClock>.firstPassDelay)
        try await harness.logs.wait(timeout: .seconds(10), "history-pruned") { $0.contains { $0.event == "history-pruned" } }
        await harness.stop()
    }

    @Test func forgetRemovesAPathsVersionsAndSaysSo() async throws {
        let harness = try Harness()
        await harness.save("secret.env", Array("TOKEN=1\n".utf8))
        await harness.save("secret.env", Array("TOKEN=2\n".utf8))
        await harness.save("kept.txt", Array("kept\n".utf8))
        let report = try await harness.history.forget("secret.env")
        #expect(report.versions == 2)
        await #expect(throws: HistoryQueryError.noVersions(path: "secret.env")) { try await harness.versions("secret.env") }
        await #expect(throws: HistoryQueryError.noVersions(path: "secret.env")) { try await harness.history.forget("secret.env") }
        #expect(try await harness.versions("kept.txt").count == 1)
        let line = try #require(harness.logs.elements.first { $0.event == "history-forgot" })
        #expect(line.fields["path"] == "secret.env" && line.fields["versions"] == "2")
        await harness.stop()
    }
}
