import AutosaveKit
import AutosaveTestKit
import Foundation
import Inotify
import Logging
import Testing

/// A FileWatcher on a real temp project, driven by a manual clock.
final class WatcherHarness: Sendable {
    let project: TemporaryDirectory
    let clock = ManualClock()
    let logs = AsyncRecorder<CapturedLog>()
    let changes = AsyncRecorder<FileChange>()
    let watcher: FileWatcher<ManualClock>
    let settle: Duration
    let runTask: Task<Void, Never>

    init(
        files: [String: String] = [:], configure: (inout Configuration) -> Void = { _ in },
        prepare: (TemporaryDirectory) throws -> Void = { _ in }
    ) async throws {
        project = try TemporaryDirectory()
        for (path, content) in files { try project.write(path, content) }
        try prepare(project)
        var configuration = Configuration()
        configure(&configuration)
        settle = .milliseconds(configuration.watch.settleMs)
        let resolved = ResolvedConfiguration(
            configuration: configuration, root: project.path, stateDirectory: project.path + "/.autosave", file: nil)
        watcher = FileWatcher(configuration: resolved, clock: clock, logger: LogCapture.logger(logs))
        try await watcher.start()
        // One change at a time, as bursts are read here change by change; as the log reports them.
        let (flat, continuation) = AsyncStream.makeStream(of: FileChange.self)
        let bursts = watcher.changes
        Task {
            for await burst in bursts { for change in burst where !change.isTransient { continuation.yield(change) } }
            continuation.finish()
        }
        changes.record(flat)
        let watcher = self.watcher
        runTask = Task { await watcher.run() }
    }

    /// Lets every event so far in, closes every settle window, and returns the changes that came.
    @discardableResult
    func settleAll() async throws -> [FileChange] {
        let before = changes.elements.count
        await watcher.sync()
        clock.advance(by: settle)
        await watcher.syncAndSettle()
        // Changes reach the recorder through a stream; a barrier does not cover that hop.
        let reported = try await logs.wait(timeout: .seconds(20), "logged changes") { _ in true }
            .filter { $0.event == "external-change" }.count
        try await changes.wait(timeout: .seconds(20), "recorded changes") { $0.count >= reported }
        return Array(changes.elements.dropFirst(before))
    }

    func path(_ relative: String) -> String { project.url(relative) }

    /// Waits, on barriers, until the wall clock is well past the newest ctime of `relatives`.
    func waitUntilOlderThanTheRescanMargin(_ relatives: [String]) async throws {
        // The newest of them counts: a harness writes its files in a dictionary's order.
        let changed = relatives.map { relative in
            var status = stat()
            lstat(path(relative), &status)
            return Double(status.st_ctim.tv_sec) + Double(status.st_ctim.tv_nsec) / 1e9
        }.max() ?? 0
        try project.write(".marker", "tick")
        var rounds = 0
        while Date().timeIntervalSince1970 < changed + 0.1 && rounds < 10_000 {
            try project.write(".marker", "tick")
            await watcher.sync()
            rounds += 1
        }
        try project.remove(".marker")
        try await settleAll()
    }

    func stop() async {
        await watcher.stop()
        await runTask.value
    }
}


@Suite struct FileWatcherTests {
    @Test func watchingIsLoggedOnceWithTheTreeSize() async throws {
        let harness = try await WatcherHarness(files: ["a.txt": "a", "src/b.txt": "b", ".git/HEAD": "ref"])
        let ready = harness.logs.elements.filter { $0.event == "watching" }
        #expect(ready.count == 1)
        #expect(ready.first?.fields["dirs"] == "2")
        #expect(ready.first?.fields["watches"] == "2")
        #expect(ready.first?.fields["files"] == "2")
        #expect(ready.first?.fields["root"] == harness.project.path)
        await harness.stop()
    }

    /// The first scan's listings become the known files when first needed, not before `start`
    /// returns: a question asked before `run()` has begun must still find every file.
    @Test func theFirstScansFilesAreKnownBeforeRunBegins() async throws {
        let project = try TemporaryDirectory()
        for path in ["a.txt", "src/b.txt", "src/deep/c.txt"] { try project.write(path, "x") }
        let resolved = ResolvedConfiguration(
            configuration: Configuration(), root: project.path, stateDirectory: project.path + "/.autosave", file: nil)
        let watcher = FileWatcher(configuration: resolved, clock: ManualClock(), logger: Logger(label: "test"))
        let scan = try await watcher.start()
        #expect(scan.fileCount == 3, "the scan keeps its count")
        #expect(scan.listings.isEmpty, "its listings went to the known files")
        #expect(await watcher.knownFileCount == 3)
        await watcher.stop()
    }

    /// A name that is not UTF-8 is not tracked. Found by trying it: one there when the watcher
    /// started was known by its repaired spelling, and the first write to it was reported as its
    /// removal (the repaired name is not on disk), to any buffer open on that spelling.
    @Test func aFileWhoseNameIsNotUTF8IsNotReportedWhenWritten() async throws {
        let raw: [UInt8] = Array("n".utf8) + [0xFF] + Array("p.txt".utf8)
        let harness = try await WatcherHarness(files: ["plain.txt": "p\n"], prepare: { project in
            let path = Array(project.path.utf8) + [UInt8(ascii: "/")] + raw + [0]
            let fd = path.withUnsafeBytes { open($0.baseAddress!.assumingMemoryBound(to: CChar.self), O_WRONLY | O_CREAT, 0o644) }
            #expect(fd >= 0)
            close(fd)
        })
        #expect(await harness.watcher.knownFileCount == 1, "only plain.txt is known")
        let path = Array(harness.project.path.utf8) + [UInt8(ascii: "/")] + raw + [0]
        let fd = path.withUnsafeBytes { open($0.baseAddress!.assumingMemoryBound(to: CChar.self), O_WRONLY | O_APPEND) }
        #expect(fd >= 0)
        _ = "more\n".withCString { write(fd, $0, 5) }
        close(fd)
        try harness.project.write("plain.txt", "q\n")
        let changes = try await harness.settleAll()
        #expect(changes.map { "\($0.kind) \($0.path)" } == ["modified plain.txt"])
        await harness.stop()
    }

    @Test func aShellRedirectIsOneModification() async throws {
        let harness = try await WatcherHarness(files: ["f.txt": "old\n"])
        let handle = try #require(FileHandle(forWritingAtPath: harness.path("f.txt")))
        try handle.truncate(atOffset: 0)
        try handle.write(contentsOf: Data("new\n".utf8))
        try handle.close()
        #expect(try await harness.settleAll() == [FileChange(.modified, "f.txt")])
        await harness.stop()
    }

    @Test func tempFileAndRenameIsOneModification() async throws {
        let harness = try await WatcherHarness(files: ["f.txt": "old\n"])
        try harness.project.write("f.txt.tmp.81723", "new\n")
        try harness.project.rename("f.txt.tmp.81723", "f.txt")
        // The temp name is where the new file came from last: a buffer that opened it follows it.
        #expect(try await harness.settleAll() == [FileChange(.modified, "f.txt", arrivedFrom: ["f.txt.tmp.81723"])])
        await harness.stop()
    }

    @Test func sedInPlaceIsOneModification() async throws {
        let harness = try await WatcherHarness(files: ["notes.txt": "first line\nsecond line\n"])
        try runTool("/bin/sed", ["-i", "s/first/1st/", harness.path("notes.txt")])
        #expect(try await harness.settleAll() == [FileChange(.modified, "notes.txt")])
        #expect(try harness.project.read("notes.txt") == "1st line\nsecond line\n")
        let lines = harness.logs.elements.filter { $0.event == "external-change" }
        #expect(lines.map { $0.fields["path"] } == ["notes.txt"])
        #expect(lines.map { $0.fields["kind"] } == ["modified"])
        await harness.stop()
    }

    @Test func vimsRenameDanceIsOneModification() async throws {
        let harness = try await WatcherHarness(files: ["f.txt": "old\n"])
        // vim (backupcopy=auto, writebackup): probe with 4913, back up by rename, write anew, drop the backup.
        try harness.project.write("4913", "")
        try harness.project.remove("4913")
        try harness.project.rename("f.txt", "f.txt~")
        try harness.project.write("f.txt", "new\n")
        chmod(harness.path("f.txt"), 0o644)
        try harness.project.remove("f.txt~")
        #expect(try await harness.settleAll() == [FileChange(.modified, "f.txt")])
        await harness.stop()
    }

    @Test func creationRemovalAndRenameAreClassified() async throws {
        let harness = try await WatcherHarness(files: ["gone.txt": "x", "old.txt": "y"])
        try harness.project.write("new.txt", "n")
        try harness.project.remove("gone.txt")
        try harness.project.rename("old.txt", "renamed.txt")
        let changes = try await harness.settleAll()
        #expect(Set(changes) == [
            FileChange(.created, "new.txt"), FileChange(.removed, "gone.txt"),
            FileChange(.moved, "renamed.txt", from: "old.txt"),
        ])
        await harness.stop()
    }

    /// A settled change carries the file the watcher classified it by, as it was then (device,
    /// inode, size, modification time), so that the buffers need not look at the name again; a
    /// removal carries none. Before it did, each settled change was looked at 3-4 more times on
    /// its way to a buffer.
    @Test func aSettledChangeCarriesTheFileAsItWasWhenItSettled() async throws {
        let harness = try await WatcherHarness(files: ["f.txt": "old\n", "a.txt": "a", "gone.txt": "g"])
        try harness.project.write("f.txt", "new content\n")
        try harness.project.write("new.txt", "n")
        try harness.project.rename("a.txt", "b.txt")
        try harness.project.remove("gone.txt")
        let written = try #require(Fingerprint.of(harness.path("f.txt")))
        let created = try #require(Fingerprint.of(harness.path("new.txt")))
        let moved = try #require(Fingerprint.of(harness.path("b.txt")))
        let first = Dictionary(uniqueKeysWithValues: try await harness.settleAll().map { ($0.path, $0) })
        #expect(
            Set(first.values.map(\.description))
                == ["modified f.txt", "created new.txt", "moved a.txt -> b.txt", "removed gone.txt"])
        let modified = try #require(first["f.txt"]?.fingerprint)
        #expect(modified.device == written.device && modified.inode == written.inode && modified.size == 12)
        #expect(modified == written)
        #expect(first["new.txt"]?.fingerprint == created)
        #expect(first["b.txt"]?.fingerprint == moved, "a move carries its destination's file")
        #expect(first["gone.txt"].map { $0.fingerprint == nil } == true, "a removal carries no file")
        // Written again in place: the next change carries the file as it is then.
        try harness.project.write("f.txt", "newer and longer\n")
        let again = try await harness.settleAll()
        #expect(again.map(\.fingerprint?.size) == [17])
        #expect(again.first?.fingerprint?.inode == written.inode)
        await harness.stop()
    }

    /// Two changes are equal when they say the same thing happened, whatever file each saw; their
    /// names are compared as bytes (NFC and NFD spellings are two files).
    @Test func changesAreEqualWhenTheySayTheSameThingHappened() throws {
        let project = try TemporaryDirectory()
        let seen = try #require(Fingerprint.of(try project.write("f.txt", "x")))
        #expect(FileChange(.modified, "f.txt", fingerprint: seen) == FileChange(.modified, "f.txt"))
        #expect(Set([FileChange(.modified, "f.txt", fingerprint: seen), FileChange(.modified, "f.txt")]).count == 1)
        #expect(FileChange(.created, "caf\u{E9}.txt") != FileChange(.created, "cafe\u{301}.txt"))
        #expect(FileChange(.moved, "b", from: "caf\u{E9}") != FileChange(.moved, "b", from: "cafe\u{301}"))
        let composed = FileChange(.modified, "b", arrivedFrom: ["caf\u{E9}"])
        #expect(composed != FileChange(.modified, "b", arrivedFrom: ["cafe\u{301}"]))
    }

    @Test func aRenameOverAnExistingFileIsAMove() async throws {
        let harness = try await WatcherHarness(files: ["draft.txt": "new", "final.txt": "old"])
        try harness.project.rename("draft.txt", "final.txt")
        #expect(try await harness.settleAll() == [FileChange(.moved, "final.txt", from: "draft.txt")])
        await harness.stop()
    }

    @Test func removedAndRecreatedAfterTheWindowIsTwoChanges() async throws {
        let harness = try await WatcherHarness(files: ["f.txt": "x"])
        try harness.project.remove("f.txt")
        #expect(try await harness.settleAll() == [FileChange(.removed, "f.txt")])
        try harness.project.write("f.txt", "again")
        #expect(try await harness.settleAll() == [FileChange(.created, "f.txt")])
        await harness.stop()
    }

    @Test func nothingIsReportedBeforeTheWindowCloses() async throws {
        let harness = try await WatcherHarness(files: ["f.txt": "x"])
        try harness.project.write("f.txt", "y")
        await harness.watcher.sync()
        harness.clock.advance(by: .milliseconds(49))
        await harness.watcher.sync()
        #expect(harness.changes.elements.isEmpty)
        harness.clock.advance(by: .milliseconds(1))
        _ = try await harness.changes.first(timeout: .seconds(20), "the modification") { $0 == FileChange(.modified, "f.txt") }
        await harness.stop()
    }

    @Test func windowsClosingWithinHalfAMillisecondOfAWakeUpAreSettledByIt() async throws {
        // A write's events reach the watcher a little apart; the wake-up for the first window
        // settles a window that closes a fraction of a millisecond later, instead of sleeping again.
        let harness = try await WatcherHarness(files: ["f.txt": "x", "g.txt": "x", "h.txt": "x"])
        try harness.project.write("f.txt", "y")
        await harness.watcher.sync()
        harness.clock.advance(by: .microseconds(300))
        try harness.project.write("g.txt", "y")
        await harness.watcher.sync()
        harness.clock.advance(by: .microseconds(400))
        try harness.project.write("h.txt", "y")
        await harness.watcher.sync()
        harness.clock.advance(by: .microseconds(49_300))
        try await harness.changes.wait(timeout: .seconds(20), "f.txt and g.txt at f.txt's deadline") { $0.count >= 2 }
        await harness.watcher.sync()
        #expect(Set(harness.changes.elements) == [FileChange(.modified, "f.txt"), FileChange(.modified, "g.txt")])
        harness.clock.advance(by: .microseconds(700))
        _ = try await harness.changes.first(timeout: .seconds(20), "h.txt, 0.7 ms later") { $0 == FileChange(.modified, "h.txt") }
        await harness.stop()
    }

    @Test func ignoredNamesAreNeverReported() async throws {
        let harness = try await WatcherHarness(files: ["keep.txt": "k"]) { $0.watch.ignore = ["*.log", "build/"] }
        try harness.project.write("debug.log", "x")
        try harness.project.write("build/out.o", "x")
        try harness.project.write(".keep.txt.swp", "x")
        try harness.project.write(".git/index", "x")
        try harness.project.write("keep.txt", "k2")
        #expect(try await harness.settleAll() == [FileChange(.modified, "keep.txt")])
        await harness.stop()
    }

    @Test func aDeepDirectoryRenameNamesTheNewPath() async throws {
        let deep = (1...9).map { "level\($0)" }.joined(separator: "/")
        let harness = try await WatcherHarness(files: ["top/\(deep)/leaf.txt": "x"])
        try harness.project.rename("top", "moved")
        #expect(try await harness.settleAll() == [FileChange(.moved, "moved", from: "top", isDirectory: true)])
        try runTool("/usr/bin/touch", [harness.path("moved/\(deep)/leaf.txt")])
        #expect(try await harness.settleAll() == [FileChange(.modified, "moved/\(deep)/leaf.txt")])
        await harness.stop()
    }

    @Test func filesInANewDirectoryAreReportedOnce() async throws {
        let harness = try await WatcherHarness()
        try harness.project.write("a/b/c/f.txt", "x")
        try harness.project.write("a/b/g.txt", "y")
        #expect(Set(try await harness.settleAll()) == [FileChange(.created, "a/b/c/f.txt"), FileChange(.created, "a/b/g.txt")])
        await harness.stop()
    }

    @Test func aDirectoryMovedOutIsRemovedAndSilent() async throws {
        let outside = try TemporaryDirectory()
        let harness = try await WatcherHarness(files: ["d/f.txt": "x", "d/e/g.txt": "y"])
        try harness.project.rename("d", outside.path + "/d")
        let removed = try await harness.settleAll()
        #expect(removed == [FileChange(.removed, "d", isDirectory: true)])
        #expect(harness.logs.elements.last { $0.event == "external-change" }?.fields["files"] == "2")
        try outside.write("d/f.txt", "changed")
        #expect(try await harness.settleAll().isEmpty)
        await harness.stop()
    }
}
