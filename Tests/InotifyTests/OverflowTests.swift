import AutosaveTestKit
import Foundation
import Inotify
import Testing

/// Overflow tests flood the process's one inotify queue and pause its one reader, which every
/// watcher in the process shares: `make test` runs them in a process of their own, one at a time.
/// Run beside other suites (a filter that matches one by accident), they would fail those.
@Suite(
    .serialized,
    .enabled(
        if: TestProcess.runsOneTestAtATime,
        "floods the inotify queue every watcher in this process shares: run with --no-parallel, as make test does"))
struct OverflowTests {
    @Test func overflowIsReportedAndFollowedByAFullRescan() async throws {
        let project = try await WatchedProject(files: ["keep.txt": "k"])
        let limit = KernelLimits.maxQueuedEvents ?? 16_384
        let stall = project.watcher._stallReader()
        await stall.waitUntilStalled()
        // Each new file queues a CREATE and a CLOSE_WRITE: more than the queue holds.
        for index in 0..<(limit / 2 + 100) {
            let fd = open(project.directory.url("f\(index)"), O_WRONLY | O_CREAT, 0o644)
            close(fd)
        }
        stall.release()
        try await project.sync()
        let events = project.events.elements
        #expect(events.contains(.overflow))
        let rescan = events.compactMap { event -> DirectoryScan? in
            if case .rescanned(let scan) = event { return scan }
            return nil
        }.first
        #expect(rescan?.files.count == limit / 2 + 100 + 1)
        #expect(rescan?.unseenSince != nil)
        #expect(rescan?.files.allSatisfy { $0.changeTime != nil } == true)
        await project.watcher.stop()
    }
}
