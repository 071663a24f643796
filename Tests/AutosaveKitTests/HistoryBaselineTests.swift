@testable import AutosaveKit
import AutosaveHistory
import AutosaveTestKit
import Foundation
import Testing

/// History's baseline on real files and the real inotify: after `ready`, every file is stored
/// once in the background, so the first outside change to a file no buffer read still has the
/// version before it; a restart reads only what changed; what history must never hold it skips.
@Suite struct HistoryBaselineTests {
    /// Opens the gate as the agent does once `ready` is out, and waits for the pass to end.
    @discardableResult
    func runBaseline(_ harness: WorkspaceHarness) async throws -> CapturedLog {
        await harness.workspace.finishStartUp()
        return try await harness.logs.first(timeout: .seconds(60), "history-baseline done") {
            $0.event == "history-baseline" && ["done", "failed", "off"].contains($0.fields["state"] ?? "")
        }
    }

    func history(_ harness: WorkspaceHarness) async throws -> VersionHistory {
        try #require(await harness.workspace.history, "history is on by default")
    }

    func text(_ history: VersionHistory, _ path: String, _ selector: VersionSelector) async throws -> String? {
        try await history.content(of: path, at: selector).content.map { String(decoding: $0, as: UTF8.self) }
    }

    @Test func theFirstOutsideChangeToAFileNeverOpenedKeepsTheVersionBefore() async throws {
        let harness = try await WorkspaceHarness(files: ["notes.txt": "a morning's work\n", "d/e/deep.txt": "deep\n"])
        let done = try await runBaseline(harness)
        #expect(done.fields["state"] == "done")
        #expect(done.fields["files"] == "2" && done.fields["of"] == "2" && done.fields["versions"] == "2", "\(done)")
        // As `cat > notes.txt` by mistake would.
        try harness.project.write("notes.txt", "oops\n")
        await harness.settleExternalChanges()
        let history = try await history(harness)
        #expect(try await text(history, "notes.txt", .back(1)) == "a morning's work\n")
        #expect(try await history.versions(at: "notes.txt").map(\.kind) == [.modified, .baseline])
        // Its latest version is no longer the read the stamp describes: a restart reads it again,
        // even should a power cut put the old bytes, mtime and all, back.
        let stamp = try history.database.withStore { store throws(HistoryError) in try store.stamp(of: "notes.txt") }
        #expect(stamp == nil)
        #expect(try history.database.withStore { store throws(HistoryError) in try store.stamp(of: "d/e/deep.txt") } != nil)
        #expect(try await text(history, "d/e/deep.txt", .back(0)) == "deep\n")
        await harness.stop()
    }

    @Test func aBaselineVersionIsDatedByItsFileNotByTheStart() async throws {
        let harness = try await WorkspaceHarness(files: ["old.txt": "old\n"])
        let week: TimeInterval = 7 * 24 * 3600
        let modified = Date().addingTimeInterval(-week)
        try FileManager.default.setAttributes([.modificationDate: modified], ofItemAtPath: harness.project.url("old.txt"))
        try await runBaseline(harness)
        let version = try #require(try await history(harness).versions(at: "old.txt").first)
        #expect(abs(version.time - Int64(modified.timeIntervalSince1970 * 1000)) < 1000, "it held these bytes since its mtime")
        await harness.stop()
    }

    @Test func aRestartReadsOnlyWhatChangedSince() async throws {
        let files = Dictionary(uniqueKeysWithValues: (0..<20).map { ("f\($0).txt", "file \($0)\n") })
        let first = try await WorkspaceHarness(files: files)
        let firstDone = try await runBaseline(first)
        #expect(firstDone.fields["versions"] == "20")
        await first.stop()
        // While the agent is down: one file rewritten, one touched to the same mtime it had
        // (`cp -p`, an older `git checkout`): its ctime still tells.
        try first.project.write("f1.txt", "changed while the agent was down\n")
        let path = first.project.url("f2.txt")
        let mtime = try FileManager.default.attributesOfItem(atPath: path)[.modificationDate] as! Date
        try first.project.write("f2.txt", "file 2\n")
        try FileManager.default.setAttributes([.modificationDate: mtime], ofItemAtPath: path)

        let second = try await WorkspaceHarness(root: first.project.path)
        let done = try await runBaseline(second)
        #expect(done.fields["skipped"] == "18", "\(done)")
        #expect(done.fields["versions"] == "1", "f2.txt has the same bytes again: no new version")
        let history = try await history(second)
        #expect(try await text(history, "f1.txt", .back(0)) == "changed while the agent was down\n")
        #expect(try await text(history, "f1.txt", .back(1)) == "file 1\n")
        await second.stop()
    }

    @Test func itStoresNothingHistoryMustNeverHold() async throws {
        let outside = try TemporaryDirectory()
        try outside.write("secret.txt", "outside the root\n")
        let harness = try await WorkspaceHarness(
            files: [
                "kept.txt": "kept\n", "build/out.o": "ignored\n", ".git/config": "[core]\n",
                "big.bin": String(repeating: "x", count: 5000),
            ],
            configure: {
                $0.history.maxFileBytes = 4096
                $0.watch.ignore = ["build/"]
            })
        try FileManager.default.createSymbolicLink(
            atPath: harness.project.url("link.txt"), withDestinationPath: outside.url("secret.txt"))
        await harness.settleExternalChanges()
        try await runBaseline(harness)
        let history = try await history(harness)
        let paths = Set(try await history.versions(at: "").map(\.path))
        #expect(paths == ["kept.txt"], "not ignored files, .git/, the state directory, files over the cap or links")
        await harness.stop()
    }

    @Test func aLargeBinaryIsNotRecordedASmallOneAndALargeTextAre() async throws {
        let harness = try await WorkspaceHarness(configure: { $0.history.maxBinaryBytes = 4096 })
        var large = [UInt8](repeating: UInt8(ascii: "x"), count: 8192)
        large[10] = 0
        try TemporaryDirectory.writeFile(harness.project.url("large.bin"), large)
        try TemporaryDirectory.writeFile(harness.project.url("small.bin"), [0x89, 0x50, 0, 1])
        try harness.project.write("large.txt", String(repeating: "a line of text\n", count: 600))
        await harness.settleExternalChanges()
        try await runBaseline(harness)
        // And when they change from outside.
        large[20] = 0
        try TemporaryDirectory.writeFile(harness.project.url("large.bin"), large)
        await harness.settleExternalChanges()
        let history = try await history(harness)
        await history.caughtUp()
        let paths = Set(try await history.versions(at: "").map(\.path))
        #expect(paths == ["small.bin", "large.txt"], "a binary over history.maxBinaryBytes is never recorded")
        await harness.stop()
    }

    @Test func offItStoresNothing() async throws {
        let harness = try await WorkspaceHarness(files: ["a.txt": "a\n"], configure: { $0.history.baseline = .off })
        await harness.workspace.finishStartUp()
        // Stopping ends the pass, had it begun: then nothing it would have done is still to come.
        await harness.stop()
        #expect(harness.logged("history-baseline").isEmpty)
        let store = try VersionStore(path: harness.project.url(".autosave/history.sqlite"))
        #expect(try store.versions(below: "").isEmpty)
    }

    /// The race made to happen through the seam: between the pass's read of a file and its
    /// record, the file changes and history records that change. The pass must then leave the
    /// file alone, or the old bytes would land on top as its latest version.
    @Test func aFileThatChangesWhileThePassHoldsItsOldBytesIsLeftToTheWatcher() async throws {
        let reads = AsyncRecorder<String>()
        let resume = DispatchSemaphore(value: 0)
        let harness = try await WorkspaceHarness(
            files: ["a.txt": "old\n"],
            afterBaselineRead: { path in
                reads.append(path)
                resume.wait()
            })
        await harness.workspace.finishStartUp()
        _ = try await reads.first(timeout: .seconds(30), "the pass read a.txt") { $0 == "a.txt" }
        try harness.project.write("a.txt", "new\n")
        await harness.settleExternalChanges()
        let history = try await history(harness)
        await history.caughtUp()
        resume.signal()
        let done = try await harness.logs.first(timeout: .seconds(30), "history-baseline done") {
            $0.event == "history-baseline" && $0.fields["state"] == "done"
        }
        #expect(done.fields["versions"] == "0")
        #expect(try await text(history, "a.txt", .back(0)) == "new\n")
        #expect(try await history.versions(at: "a.txt").map(\.kind) == [.modified])
        await harness.stop()
    }

    /// Property: whatever outside writes race the pass, once all is quiet each file's latest
    /// version in history is what the file holds, byte for byte.
    @Test(arguments: 0..<3) func writesDuringThePassLeaveEachFilesLatestVersionEqualToIt(seed: UInt64) async throws {
        var random = SplitMix64(seed: 0xBA5E_0000 + seed)
        let count = 150
        let files = Dictionary(uniqueKeysWithValues: (0..<count).map { ("d\($0 % 7)/f\($0).txt", "v0 \($0)\n") })
        let harness = try await WorkspaceHarness(files: files, configure: { $0.watch.settleMs = 0 })
        await harness.workspace.finishStartUp()
        var expected = files
        for round in 1...3 {
            for _ in 0..<40 {
                let index = Int(random.next() % UInt64(count))
                let path = "d\(index % 7)/f\(index).txt"
                expected[path] = "v\(round) \(index) \(random.next())\n"
                try harness.project.write(path, expected[path]!)
            }
            await harness.settleExternalChanges()
        }
        _ = try await harness.logs.first(timeout: .seconds(60), "history-baseline done") {
            $0.event == "history-baseline" && $0.fields["state"] == "done"
        }
        await harness.settleExternalChanges()
        let history = try await history(harness)
        await history.caughtUp()
        for (path, text) in expected.sorted(by: { $0.key < $1.key }) {
            #expect(try await self.text(history, path, .back(0)) == text, "\(path)")
        }
        await harness.stop()
    }
}
