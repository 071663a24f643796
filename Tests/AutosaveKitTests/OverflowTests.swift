@testable import AutosaveKit
import AutosaveTestKit
import Foundation
import Inotify
import Logging
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
    @Test func anOverflowIsFollowedByARescanThatFindsWhatChanged() async throws {
        let harness = try await WatcherHarness(files: ["edited.txt": "old", "deleted.txt": "x", "same.txt": "s"])
        let limit = KernelLimits.maxQueuedEvents ?? 16_384
        // Rescans treat a file whose ctime is within a clock tick of the last drained queue as
        // possibly changed; let the untouched file age past that margin, proven by the watcher.
        try await harness.waitUntilOlderThanTheRescanMargin(["same.txt"])
        let stall = harness.watcher._stallReader()
        await stall.waitUntilStalled()
        try harness.project.write("edited.txt", "new")
        try harness.project.remove("deleted.txt")
        for index in 0..<(limit / 2 + 10) {
            close(open(harness.path("flood-\(index)"), O_WRONLY | O_CREAT, 0o644))
        }
        stall.release()
        let rescan = try await harness.logs.first(timeout: .seconds(60), "rescan") { $0.event == "rescan" }
        #expect(harness.logs.elements.contains { $0.event == "overflow" && $0.level == .warning })
        #expect(rescan.fields["scope"] == "all")
        // What the queue held settles as usual; the rescan reports only what the overflow lost.
        #expect(Int(rescan.fields["created"] ?? "") ?? 0 > 0)
        try await harness.settleAll()
        let changes = harness.changes.elements.filter { $0.path != ".marker" }
        let created = changes.filter { $0.kind == .created }.map(\.path)
        #expect(created.count == limit / 2 + 10)
        #expect(Set(created).count == created.count, "a file was reported twice")
        #expect(changes.filter { $0.path == "edited.txt" } == [FileChange(.modified, "edited.txt")])
        #expect(changes.filter { $0.path == "deleted.txt" } == [FileChange(.removed, "deleted.txt")])
        #expect(!changes.contains { $0.path == "same.txt" })
        await harness.stop()
    }

    /// "What changed since?" after events were lost: every clock from before the loss is
    /// answered `fresh` (the client rescans), never with a list that would be silently short;
    /// a clock from after it is answered exactly again.
    @Test func anOverflowAnswersEveryEarlierClockFresh() async throws {
        let harness = try await WatcherHarness(files: ["f.txt": "old"])
        let before = await harness.watcher.changes(since: nil).clock
        try harness.project.write("f.txt", "new")
        try await harness.settleAll()
        #expect(await harness.watcher.changes(since: before).changes.map(\.path) == ["f.txt"])
        try await harness.overflow(meanwhile: { try harness.project.write("lost.txt", "written while events were lost") })
        try await harness.settleAll()
        #expect(await harness.watcher.changes(since: before).isFresh)
        let after = await harness.watcher.changes(since: nil).clock
        try harness.project.write("f.txt", "newer")
        try await harness.settleAll()
        let answer = await harness.watcher.changes(since: after)
        #expect(!answer.isFresh)
        #expect(answer.changes.map(\.path) == ["f.txt"])
        await harness.stop()
    }

    /// A change reported just before the queue overflowed has a fresh ctime, and the rescan used
    /// to report it again (`moved` then `modified`, `f.txt` twice).
    @Test func theRescanDoesNotRepeatWhatWasAlreadyReported() async throws {
        let harness = try await WatcherHarness(files: ["f.txt": "old", "g.txt": "g"])
        try harness.project.write("f.txt", "new")
        try harness.project.rename("g.txt", "h.txt")
        let before = try await harness.settleAll()
        #expect(Set(before) == [FileChange(.modified, "f.txt"), FileChange(.moved, "h.txt", from: "g.txt")])
        try await harness.overflow()
        try await harness.settleAll()
        let repeated = harness.changes.elements.filter { ["f.txt", "g.txt", "h.txt"].contains($0.path) }
        #expect(repeated.count == 2, "reported again: \(repeated.dropFirst(2))")
        await harness.stop()
    }

    /// The known files are held per directory, compactly; a directory of thousands of files
    /// renamed whole must be known at its new place, so that the rescan after an overflow finds
    /// nothing there that did not change.
    @Test func aRescanAfterADirectoryOfThousandsOfFilesMovedFindsOnlyWhatChanged() async throws {
        var files: [String: String] = ["top.txt": "t"]
        for index in 0..<3_000 { files["big/f\(index).txt"] = "\(index)" }
        for index in 0..<500 { files["big/deep/g\(index)"] = "g" }
        let harness = try await WatcherHarness(files: files)
        try harness.project.rename("big", "moved")
        // A directory's move is reported as it is seen, not when a window settles.
        _ = try await harness.changes.wait(timeout: .seconds(20), "the directory's move") {
            $0.contains(FileChange(.moved, "moved", from: "big", isDirectory: true))
        }
        try await harness.settleAll()
        let before = harness.changes.elements.count
        // Every file, not one: they were written in no set order, a few hundred ms apart on a
        // loaded machine, and one written after the file waited on was reported modified.
        let written = (0..<3_000).map { "moved/f\($0).txt" } + (0..<500).map { "moved/deep/g\($0)" }
        try await harness.waitUntilOlderThanTheRescanMargin(written)
        let flood = try await harness.overflow {
            try harness.project.write("moved/deep/g7", "changed while events were lost")
        }
        try await harness.settleAll()
        let after = harness.changes.elements.dropFirst(before).filter { !$0.path.hasPrefix("flood-") && $0.path != ".marker" }
        #expect(after == [FileChange(.modified, "moved/deep/g7")], "the rescan reported \(after.prefix(5))")
        #expect(await harness.watcher.knownFileCount == 3_501 + flood)
        await harness.stop()
    }

    @Test func buffersAreReconciledAfterAnOverflow() async throws {
        let harness = try await WorkspaceHarness(files: ["clean.txt": "old\n", "dirty.txt": "a\nb\nc\n"])
        _ = try await harness.workspace.open("clean.txt")
        _ = try await harness.write("dirty.txt", "A\nb\nc\n")
        let limit = KernelLimits.maxQueuedEvents ?? 16_384
        let stall = await harness.workspace._stallWatcher()
        await stall.waitUntilStalled()
        for index in 0..<(limit / 2 + 10) {
            close(open(harness.project.url("flood-\(index)"), O_WRONLY | O_CREAT, 0o644))
        }
        // These edits happen after the queue is full: only the rescan can find them.
        try harness.project.write("clean.txt", "new\n")
        try harness.project.write("dirty.txt", "a\nb\nC\n")
        stall.release()
        _ = try await harness.logs.first(timeout: .seconds(60), "rescan") { $0.event == "rescan" }
        await harness.settleExternalChanges()
        #expect(try await harness.text("clean.txt") == "new\n")
        #expect(try await harness.text("dirty.txt") == "A\nb\nC\n")
        await harness.stop()
    }
}

extension WatcherHarness {
    /// Overflows the kernel's queue: stalls the watcher's reader, does `meanwhile`, creates
    /// `flood-N` files until the queue is past its limit, lets the reader go and waits for the
    /// rescan. Returns how many files it created.
    @discardableResult
    func overflow(meanwhile: () throws -> Void = {}) async throws -> Int {
        let stall = watcher._stallReader()
        await stall.waitUntilStalled()
        try meanwhile()
        let count = (KernelLimits.maxQueuedEvents ?? 16_384) / 2 + 10
        for index in 0..<count {
            close(open(path("flood-\(index)"), O_WRONLY | O_CREAT, 0o644))
        }
        stall.release()
        _ = try await logs.first(timeout: .seconds(60), "rescan") { $0.event == "rescan" }
        return count
    }
}
