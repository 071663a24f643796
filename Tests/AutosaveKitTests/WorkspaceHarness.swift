@_spi(Testing) @testable import AutosaveKit
import AutosaveTestKit
import Foundation
import Logging

/// A Workspace on a real temp project, its time driven by a manual clock.
final class WorkspaceHarness: Sendable {
    let project: TemporaryDirectory
    let clock = ManualClock()
    let logs = AsyncRecorder<CapturedLog>()
    let events = AsyncRecorder<AgentEvent>()
    let workspace: Workspace<ManualClock>
    let configuration: Configuration
    let runTask: Task<Void, Never>

    init(
        files: [String: String] = [:], root: String? = nil, stateDirectory: String? = nil,
        configure: (inout Configuration) -> Void = { _ in },
        beforeCommit: (@Sendable (String) -> Void)? = nil, afterBaselineRead: (@Sendable (String) -> Void)? = nil
    ) async throws {
        project = try TemporaryDirectory()
        for (path, content) in files { try project.write(path, content) }
        var configuration = Configuration()
        // Durability of the journal has tests of its own; here an fsync per edit only costs time.
        configuration.journal.fsync = false
        configure(&configuration)
        self.configuration = configuration
        let rootPath = root ?? project.path
        let resolved = ResolvedConfiguration(
            configuration: configuration, root: rootPath, stateDirectory: stateDirectory ?? rootPath + "/.autosave", file: nil)
        workspace = Workspace(
            configuration: resolved, clock: clock, logger: LogCapture.logger(logs), faults: FaultPoints(beforeCommit: beforeCommit, afterBaselineRead: afterBaselineRead))
        try await workspace.start()
        events.record(workspace.events())
        let workspace = self.workspace
        runTask = Task { await workspace.run() }
    }

    var delay: Duration { .milliseconds(configuration.autosave.delayMs) }
    var settle: Duration { .milliseconds(configuration.watch.settleMs) }

    /// Lets the watcher see every change made so far, settles it, and waits until buffers took it.
    ///
    /// Time moves in steps of the settle window until nothing is pending, so saves that changes
    /// cause (and the events those saves cause) are settled too. `Workspace.sync()` is not used:
    /// it waits for the clock, which here moves only when told to.
    ///
    /// Time moves only once the buffers have taken every change settled so far, as real time
    /// would find them (they take a change in microseconds): moving it on before let a buffer's
    /// timer (writing a removed file again, say) fire ahead of the rename that explains it.
    func settleExternalChanges() async {
        for round in 0..<200 {
            await catchUp()
            if await workspace.isQuiet() {
                trace("settle: quiet after \(round) rounds")
                return
            }
            // At settle 0 the clock would stand still, and a window held for a writer (the lease
            // check may see one a moment longer than there is) would never reach its cap, as it
            // does in real time: 200 rounds of 10 ms pass the 1 s cap.
            clock.advance(by: settle > .zero ? settle : .milliseconds(10))
            await catchUp()
            try? await waitForQuietBuffers()
        }
        trace("settle: still busy after 200 rounds")
    }

    /// Waits until the watcher has every event so far, has settled the windows the clock passed,
    /// and the buffers have taken what it reported.
    func catchUp() async {
        await workspace.watcherBarrier()
        await workspace.settleDueWindows()
        await workspace.waitForHandledChanges()
    }

    func trace(_ message: String) {
        traceLine("  " + message)
    }

    /// Moves time on by `duration` and waits until the autosaves due by then have landed.
    func advance(by duration: Duration) async throws {
        clock.advance(by: duration)
        // Settle windows the clock passed close in their timers' own tasks: wait for them too.
        await workspace.watcherBarrier()
        await workspace.settleDueWindows()
        try await waitForQuietBuffers()
    }

    /// Moves time on in steps of `step` until a log line `event` for `path` comes (at most `limit`
    /// steps): for what a timer set by an earlier timer does, whose setting the test cannot see.
    func advance(until event: String, path: String, step: Duration = .milliseconds(100), limit: Int = 50) async throws {
        for _ in 0..<limit {
            if logs.elements.contains(where: { $0.event == event && $0.fields["path"] == path }) { return }
            try await advance(by: step)
        }
    }

    /// Waits until no buffer is saving and every due save has run, for at most 20 s of real time.
    ///
    /// A deadline in real time, not a count of yields: a save's fsync on a busy disk outlasted
    /// 10,000 yields, and a test then looked at a file whose save had not yet told anyone.
    func waitForQuietBuffers() async throws {
        let deadline = ContinuousClock.now + .seconds(20)
        while ContinuousClock.now < deadline {
            // Each round asks the workspace actor: the save's own task runs between two asks.
            let statuses = await workspace.status()
            if statuses.allSatisfy({ !$0.isSaving && ($0.pendingSaveInMilliseconds.map { $0 > 0 } ?? true) }) { return }
            await Task.yield()
        }
    }

    func text(_ path: String) async throws -> String? {
        try await workspace.read(path).content.map { String(decoding: $0, as: UTF8.self) }
    }

    func write(_ path: String, _ text: String, changeID: UUID? = nil, ifRevision: Int? = nil) async throws -> Int {
        try await workspace.write(path, Array(text.utf8), changeID: changeID, ifRevision: ifRevision)
    }

    func logged(_ event: String) -> [CapturedLog] { logs.elements.filter { $0.event == event } }

    func stop() async {
        trace("stop: shutdown")
        await workspace.shutdown()
        trace("stop: run task")
        await runTask.value
        trace("stop: done")
    }
}
