import AutosaveKit
import AutosaveTestKit
import Foundation
import Inotify
import Testing

/// What the watcher reports for names that never go quiet and for another agent's state
/// directory inside the tree: the view stays what is on disk, with nothing stuck and nothing extra.
@Suite struct WatcherViewTests {
    /// A file appended every 20 ms used to be reported only once the appends stopped.
    @Test func aNameThatNeverGoesQuietIsReportedEveryMaxSettle() async throws {
        let harness = try await WatcherHarness(files: ["app.log": "start\n"]) { $0.watch.maxSettleMs = 200 }
        let handle = try #require(FileHandle(forWritingAtPath: harness.path("app.log")))
        try handle.seekToEnd()
        for line in 0..<40 {
            try handle.write(contentsOf: Data("line \(line)\n".utf8))
            await harness.watcher.sync()
            harness.clock.advance(by: .milliseconds(20))
        }
        // 800 ms of appends every 20 ms, never 50 ms quiet: four windows capped at 200 ms.
        let reported = try await harness.changes.wait(timeout: .seconds(20), "three reports while busy") {
            $0.filter { $0 == FileChange(.modified, "app.log") }.count >= 3
        }
        #expect(reported.allSatisfy { $0 == FileChange(.modified, "app.log") })
        try handle.close()
        await harness.stop()
    }

    @Test func anotherAgentsStateDirectoryFoundAtStartIsNeitherWatchedNorReported() async throws {
        let harness = try await WatcherHarness(files: [
            "inner/src.txt": "x", "inner/.autosave/agent.lock": "4242", "inner/.autosave/journal/0001": "j",
        ])
        #expect(await harness.watcher.knownFileCount == 1, "only inner/src.txt")
        try harness.project.write("inner/.autosave/journal/0002", "edit")
        try harness.project.write("inner/src.txt", "y")
        #expect(try await harness.settleAll() == [FileChange(.modified, "inner/src.txt")])
        await harness.stop()
    }

    @Test func aStateDirectoryThatAppearsIsDroppedWithoutAReport() async throws {
        let harness = try await WatcherHarness(files: ["inner/src.txt": "x"])
        try FileManager.default.createDirectory(atPath: harness.path("inner/.state"), withIntermediateDirectories: true)
        await harness.watcher.sync()
        try harness.project.write("inner/.state/agent.lock", "4242")
        try harness.project.write("inner/.state/journal", "edit 1")
        try FileManager.default.createDirectory(atPath: harness.path("inner/.state/cookies"), withIntermediateDirectories: true)
        try harness.project.write("inner/.state/cookies/c1", "")
        try harness.project.write("inner/src.txt", "y")
        #expect(try await harness.settleAll() == [FileChange(.modified, "inner/src.txt")])
        #expect(harness.logs.elements.contains { $0.event == "state-dir-ignored" && $0.fields["path"] == "inner/.state" })
        try harness.project.write("inner/.state/journal", "edit 2")
        try harness.project.write("inner/src.txt", "z")
        #expect(try await harness.settleAll() == [FileChange(.modified, "inner/src.txt")])
        #expect(await harness.watcher.knownFileCount == 1)
        await harness.stop()
    }
}

/// A rename is one change, however the kernel's queue is read: with no settle window, the
/// watcher thread takes a rename's two halves one at a time out of a batch it read at once, and
/// a settle between them used to report the source removed and the target created.
@Suite struct RenameHalvesTests {
    @Test func renamesAtSettleZeroAreNeverSplit() async throws {
        let count = 400
        var files: [String: String] = [:]
        for index in 0..<count { files["f\(index).txt"] = "content \(index)\n" }
        let harness = try await WatcherHarness(files: files) { $0.watch.settleMs = 0 }
        for index in 0..<count { try harness.project.rename("f\(index).txt", "g\(index).txt") }
        let changes = try await harness.settleAll()
        let split = changes.filter { $0.kind != .moved }
        #expect(split.isEmpty, "\(split.count) of \(changes.count) changes were not moves: \(split.prefix(6))")
        #expect(Set(changes.map(\.path)) == Set((0..<count).map { "g\($0).txt" }))
        await harness.stop()
    }
}
