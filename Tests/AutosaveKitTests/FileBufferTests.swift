@testable import AutosaveKit
import AutosaveTestKit
import Foundation
import SystemPackage
import Testing

@Suite struct AutosaveTests {
    @Test func anEditIsSavedAfterTheQuietWindow() async throws {
        let harness = try await WorkspaceHarness(files: ["a.txt": "old\n"])
        let revision = try await harness.write("a.txt", "new\n")
        #expect(revision == 1)
        #expect(await harness.workspace.status().first?.isDirty == true)
        harness.clock.advance(by: .milliseconds(999))
        try await harness.waitForQuietBuffers()
        #expect(try harness.project.read("a.txt") == "old\n")
        harness.clock.advance(by: .milliseconds(1))
        let saved = try await harness.logs.first(timeout: .seconds(20), "saved") { $0.event == "saved" }
        #expect(saved.fields["path"] == "a.txt")
        #expect(saved.fields["revision"] == "1")
        #expect(saved.fields["bytes"] == "4")
        #expect(try harness.project.read("a.txt") == "new\n")
        #expect(await harness.workspace.status().first?.isDirty == false)
        await harness.stop()
    }

    @Test func theTimerIsSetJustBeforeTheWindowClosesAndSavesWhatIsDueWithinHalfAMillisecond() async throws {
        // Timers wake a little late, so the autosave timer is set 0.1 ms early; the wake-up saves
        // a window closing up to 0.5 ms after it rather than sleeping again (and waking late again).
        let harness = try await WorkspaceHarness(files: ["a.txt": "old\n"])
        _ = try await harness.write("a.txt", "first\n")
        harness.clock.advance(by: .microseconds(300))
        _ = try await harness.write("a.txt", "second\n")
        harness.clock.advance(by: .microseconds(999_300))
        await harness.clock.waitForSleepers(1)
        #expect(harness.logged("saved").isEmpty)
        #expect(try harness.project.read("a.txt") == "old\n")
        harness.clock.advance(by: .microseconds(300))
        let saved = try await harness.logs.first(timeout: .seconds(20), "saved") { $0.event == "saved" }
        #expect(saved.fields["revision"] == "2")
        #expect(try harness.project.read("a.txt") == "second\n")
        await harness.stop()
    }

    @Test(.timeLimit(.minutes(1))) func eachEditPushesTheSaveToAQuietWindowAfterIt() async throws {
        let harness = try await WorkspaceHarness(files: ["a.txt": "old\n"])
        _ = try await harness.write("a.txt", "first\n")
        try await harness.advance(by: .milliseconds(600))
        _ = try await harness.write("a.txt", "second\n")
        // The first edit's window has passed, but the second edit's has not: the timer of the
        // first window wakes and goes back to sleep until the second's.
        harness.clock.advance(by: .milliseconds(500))
        await harness.clock.waitForSleepers(1)
        #expect(harness.logged("saved").isEmpty)
        #expect(try harness.project.read("a.txt") == "old\n")
        try await harness.advance(by: .milliseconds(500))
        let saved = try await harness.logs.first(timeout: .seconds(20), "saved") { $0.event == "saved" }
        #expect(saved.fields["revision"] == "2")
        #expect(harness.logged("saved").count == 1)
        await harness.stop()
    }

    @Test func tenThousandEditsInOneWindowAreOneWrite() async throws {
        let harness = try await WorkspaceHarness(files: ["a.txt": "start"])
        for index in 1...10_000 { _ = try await harness.write("a.txt", "edit \(index)") }
        try await harness.advance(by: harness.delay)
        _ = try await harness.logs.first(timeout: .seconds(20), "saved") { $0.event == "saved" }
        try await harness.advance(by: .seconds(60))
        #expect(harness.logged("saved").count == 1)
        #expect(harness.logged("saved").first?.fields["revision"] == "10000")
        #expect(try harness.project.read("a.txt") == "edit 10000")
        await harness.stop()
    }

    @Test func continuousTypingStillSavesAtTheMaximumDelay() async throws {
        let harness = try await WorkspaceHarness(files: ["a.txt": "start"])
        // An edit every 500 ms never leaves a 1 s quiet window; the 10 s maximum must force a save.
        for index in 1...19 {
            _ = try await harness.write("a.txt", "typing \(index)")
            try await harness.advance(by: .milliseconds(500))
        }
        #expect(harness.logged("saved").isEmpty)
        _ = try await harness.write("a.txt", "typing 20")
        try await harness.advance(by: .milliseconds(500))
        let saved = try await harness.logs.first(timeout: .seconds(20), "saved at the maximum delay") { $0.event == "saved" }
        #expect(saved.fields["revision"] == "20")
        await harness.stop()
    }

    @Test func editingBackToTheDiskVersionCancelsTheSave() async throws {
        let harness = try await WorkspaceHarness(files: ["a.txt": "same"])
        _ = try await harness.write("a.txt", "changed")
        _ = try await harness.write("a.txt", "same")
        #expect(await harness.workspace.status().first?.isDirty == false)
        #expect(await harness.workspace.status().first?.pendingSaveInMilliseconds == nil)
        try await harness.advance(by: .seconds(30))
        #expect(harness.logged("saved").isEmpty)
        await harness.stop()
    }

    @Test func anEditDuringASlowSaveIsSavedToo() async throws {
        let gate = SaveGate()
        let harness = try await WorkspaceHarness(files: ["a.txt": "v0"], beforeCommit: gate.pass)
        _ = try await harness.write("a.txt", "v1")
        let saving = await gate.holdSave(of: "a.txt", in: harness)
        _ = try await harness.write("a.txt", "v2")
        gate.release()
        try await saving.value
        #expect(try harness.project.read("a.txt") == "v1")
        #expect(await harness.workspace.status().first?.isDirty == true, "v2 arrived during the save: still dirty")
        try await harness.advance(by: harness.delay)
        _ = try await harness.logs.first(timeout: .seconds(20), "second save") { $0.event == "saved" && $0.fields["revision"] == "2" }
        #expect(try harness.project.read("a.txt") == "v2")
        #expect(await harness.workspace.status().first?.isDirty == false)
        await harness.stop()
    }

    @Test func aChangeIDAppliedTwiceIsAppliedOnce() async throws {
        let harness = try await WorkspaceHarness(files: ["a.txt": "x"])
        let id = UUID()
        #expect(try await harness.write("a.txt", "first", changeID: id) == 1)
        #expect(try await harness.write("a.txt", "first", changeID: id) == 1)
        #expect(try await harness.workspace.read("a.txt").revision == 1)
        await harness.stop()
    }

    @Test func aStaleRevisionIsRefusedNamingTheCurrentOne() async throws {
        let harness = try await WorkspaceHarness(files: ["a.txt": "x"])
        _ = try await harness.write("a.txt", "one")
        _ = try await harness.write("a.txt", "two")
        await #expect(throws: WorkspaceError.staleRevision(path: "a.txt", expected: 1, current: 2)) {
            try await harness.write("a.txt", "late", ifRevision: 1)
        }
        #expect(WorkspaceError.staleRevision(path: "a.txt", expected: 1, current: 2).description.contains("revision 2"))
        #expect(try await harness.text("a.txt") == "two")
        await harness.stop()
    }

    @Test func aDeleteQueuedAfterWritesRunsAfterThem() async throws {
        let harness = try await WorkspaceHarness(files: ["a.txt": "x"])
        _ = try await harness.write("a.txt", "written")
        _ = try await harness.workspace.remove("a.txt")
        #expect(!harness.project.exists("a.txt"))
        #expect(try await harness.workspace.read("a.txt").content == nil)
        try await harness.advance(by: .seconds(30))
        #expect(!harness.project.exists("a.txt"))
        await harness.stop()
    }

    @Test func openingAFileThatDoesNotExistCreatesNothing() async throws {
        let harness = try await WorkspaceHarness()
        let status = try await harness.workspace.open("later.txt")
        #expect(status.isDirty == false)
        #expect(status.bytes == nil)
        try await harness.advance(by: .seconds(30))
        #expect(!harness.project.exists("later.txt"))
        _ = try await harness.write("later.txt", "")
        try await harness.workspace.saveAll()
        #expect(try harness.project.read("later.txt") == "", "an empty file is still a file")
        await harness.stop()
    }

    @Test func binaryContentRoundTripsByteForByte() async throws {
        let harness = try await WorkspaceHarness()
        let bytes: [UInt8] = [0xFF, 0xFE, 0x00, 0x0A, 0xC3, 0x28, 0x80, 0x0D]
        _ = try await harness.workspace.write("blob.bin", bytes)
        try await harness.workspace.saveAll()
        #expect(try FileContents.read(harness.project.url("blob.bin")) == bytes)
        await harness.stop()
    }

    @Test func aFileOverTheLimitCannotBeOpened() async throws {
        let harness = try await WorkspaceHarness(files: ["big.txt": String(repeating: "x", count: 2048)]) {
            $0.limits.maxFileBytes = 1024
        }
        await #expect(throws: WorkspaceError.unreadable(.tooLarge(path: "big.txt", size: 2048, limit: 1024))) {
            try await harness.workspace.open("big.txt")
        }
        let message = WorkspaceError.unreadable(.tooLarge(path: "big.txt", size: 2048, limit: 1024)).description
        #expect(message == "big.txt is 2048 bytes, more than limits.maxFileBytes (1024); it cannot be opened")
        await harness.stop()
    }

    @Test func pathsOutsideTheRootAreRefused() async throws {
        let harness = try await WorkspaceHarness()
        let outside = try TemporaryDirectory()
        try FileManager.default.createSymbolicLink(atPath: harness.project.url("out"), withDestinationPath: outside.path)
        await #expect(throws: WorkspaceError.pathRefused(.linkLeadsOutside(path: "out/new.txt", link: "out", target: outside.path))) {
            try await harness.write("out/new.txt", "x")
        }
        #expect(!FileManager.default.fileExists(atPath: outside.url("new.txt")))
        for path in ["../x", "a/../../x", "/etc/passwd", ".git/config", ".autosave/journal", ""] {
            await #expect(throws: WorkspaceError.self, "\(path)") { try await harness.write(path, "x") }
        }
        try FileManager.default.createDirectory(atPath: harness.project.url("a/b"), withIntermediateDirectories: true)
        #expect(try await harness.write("./a/./b//c.txt", "ok") == 1)
        #expect(await harness.workspace.status().map(\.path) == ["a/b/c.txt"])
        await harness.stop()
    }

    @Test func autosavesWaitForAGitOperation() async throws {
        let harness = try await WorkspaceHarness(files: ["a.txt": "x", ".git/HEAD": "ref"])
        try harness.project.write(".git/index.lock", "")
        _ = try await harness.write("a.txt", "during checkout")
        try await harness.advance(by: harness.delay)
        _ = try await harness.logs.first(timeout: .seconds(20), "paused") { $0.event == "paused" }
        try await harness.advance(by: .milliseconds(300))
        #expect(harness.logged("saved").isEmpty)
        #expect(try harness.project.read("a.txt") == "x")
        try harness.project.remove(".git/index.lock")
        harness.clock.advance(by: .milliseconds(100))
        _ = try await harness.logs.first(timeout: .seconds(20), "resumed") { $0.event == "resumed" }
        _ = try await harness.logs.first(timeout: .seconds(20), "saved") { $0.event == "saved" }
        #expect(try harness.project.read("a.txt") == "during checkout")
        await harness.stop()
    }

    @Test func anExplicitSaveDoesNotWaitForGit() async throws {
        let harness = try await WorkspaceHarness(files: ["a.txt": "x", ".git/index.lock": ""])
        _ = try await harness.write("a.txt", "now")
        try await harness.workspace.save(["a.txt"])
        #expect(try harness.project.read("a.txt") == "now")
        await harness.stop()
    }

    @Test func shutdownSavesEveryDirtyBuffer() async throws {
        let harness = try await WorkspaceHarness(files: ["a.txt": "a", "b.txt": "b"])
        _ = try await harness.write("a.txt", "a2")
        _ = try await harness.write("b.txt", "b2")
        _ = try await harness.write("c.txt", "new file")
        let result = await harness.workspace.shutdown()
        #expect(result.saved == 3)
        #expect(result.failed == 0)
        #expect(try harness.project.read("a.txt") == "a2")
        #expect(try harness.project.read("c.txt") == "new file")
        await harness.runTask.value
    }

    @Test func ownSavesAreNeverReportedAsExternalChanges() async throws {
        let harness = try await WorkspaceHarness(files: ["a.txt": "x"])
        _ = try await harness.write("a.txt", "mine")
        try await harness.workspace.save(["a.txt"])
        _ = try await harness.write("new.txt", "also mine")
        try await harness.workspace.save(["new.txt"])
        await harness.settleExternalChanges()
        #expect(harness.logged("external-change").isEmpty)
        #expect(harness.logged("reloaded").isEmpty)
        await harness.stop()
    }

    @Test(.enabled(if: SmallFilesystem.isAvailable, "skipped: mounting a tmpfs needs root"))
    func aFailedSaveStaysDirtyAndRetriesWithBackoff() async throws {
        let disk = try SmallFilesystem(bytes: 64 << 10)
        try Data("small".utf8).write(to: URL(fileURLWithPath: disk.path + "/a.txt"))
        try Data(repeating: 0, count: 40 << 10).write(to: URL(fileURLWithPath: disk.path + "/filler"))
        // The journal lives elsewhere: this test is about the file's disk filling up.
        let state = try TemporaryDirectory()
        let harness = try await WorkspaceHarness(root: disk.path, stateDirectory: state.path)
        let big = String(repeating: "y", count: 30 << 10)
        _ = try await harness.write("a.txt", big)
        try await harness.advance(by: harness.delay)
        let failed = try await harness.logs.first(timeout: .seconds(20), "save-failed") { $0.event == "save-failed" }
        #expect(failed.fields["error"]?.contains("No space left on device") == true)
        #expect(failed.fields["next"] == "the buffer stays dirty; retrying in 100 ms")
        #expect(await harness.workspace.status().first?.isDirty == true)
        try await harness.advance(by: .milliseconds(100))
        let failures = try await harness.logs.wait(timeout: .seconds(20), "second failure") {
            $0.filter { $0.event == "save-failed" }.count >= 2
        }.filter { $0.event == "save-failed" }
        #expect(failures[1].fields["next"] == "the buffer stays dirty; retrying in 200 ms")
        try FileManager.default.removeItem(atPath: disk.path + "/filler")
        try await harness.advance(by: .milliseconds(200))
        _ = try await harness.logs.first(timeout: .seconds(20), "saved") { $0.event == "saved" }
        #expect(try FileContents.read(disk.path + "/a.txt").count == 30 << 10)
        // `saved` is logged once the save is durable; the old version goes right after. A save
        // asked for now waits for that one to finish.
        try await harness.workspace.save(["a.txt"])
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: disk.path).filter { $0.contains("autosave-") }
        #expect(leftovers.isEmpty)
        await harness.stop()
    }
}

/// Holds a save right before its commit, for the save-race test (fault injection).
final class SaveGate: Sendable {
    private let held = DispatchSemaphore(value: 0)
    private let released = DispatchSemaphore(value: 0)
    private let isHolding = Mutex(false)

    func hold() { isHolding.withLock { $0 = true } }

    var pass: @Sendable (String) -> Void {
        { _ in
            guard self.isHolding.withLock({ holding in defer { holding = false }; return holding }) else { return }
            self.held.signal()
            self.released.wait()
        }
    }

    func waitUntilHeld() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            DispatchQueue.global().async {
                self.held.wait()
                continuation.resume()
            }
        }
    }

    func release() { released.signal() }

    /// Starts an explicit save of `path` and returns once it is held right before its
    /// compare-and-swap; `release()` lets it go, and the task ends with the save.
    func holdSave(of path: String, in harness: WorkspaceHarness) async -> Task<Void, any Error> {
        hold()
        let saving = Task { try await harness.workspace.save([path]) }
        await waitUntilHeld()
        return saving
    }
}

import Synchronization

@Suite struct RecoveryTests {
    /// A workspace that stops without saving, as after `kill -9`.
    func crash(_ harness: WorkspaceHarness) async {
        await harness.workspace._abandon()
    }

    @Test func anAcknowledgedEditSurvivesACrashAndIsSaved() async throws {
        let project = try TemporaryDirectory()
        try project.write("a.txt", "on disk\n")
        do {
            let harness = try await WorkspaceHarness(root: project.path) { $0.journal.fsync = true }
            _ = try await harness.write("a.txt", "acknowledged, never saved\n")
            await crash(harness)
        }
        #expect(try project.read("a.txt") == "on disk\n")
        let restarted = try await WorkspaceHarness(root: project.path)
        let recovered = try #require(restarted.logged("recovered").first)
        #expect(recovered.fields["path"] == "a.txt")
        #expect(try await restarted.text("a.txt") == "acknowledged, never saved\n")
        try await restarted.advance(by: restarted.delay)
        _ = try await restarted.logs.first(timeout: .seconds(20), "saved") { $0.event == "saved" }
        #expect(try project.read("a.txt") == "acknowledged, never saved\n")
        await restarted.stop()
        let third = try await WorkspaceHarness(root: project.path)
        #expect(third.logged("recovered").isEmpty, "a saved edit is not recovered again")
        await third.stop()
    }

    @Test func tempFilesOfAnInterruptedSaveAreRemovedAtStart() async throws {
        let harness = try await WorkspaceHarness(files: [
            "src/.a.txt.autosave-k3j4h5g6f7.tmp": "half a save", "src/a.txt": "real", "src/b.tmp": "not ours",
        ])
        #expect(!harness.project.exists("src/.a.txt.autosave-k3j4h5g6f7.tmp"))
        #expect(harness.project.exists("src/b.tmp"))
        #expect(harness.logged("removed-temp").map { $0.fields["path"] } == ["src/.a.txt.autosave-k3j4h5g6f7.tmp"])
        await harness.stop()
    }

    @Test func aFileChangedWhileTheAgentWasDownKeepsBothVersions() async throws {
        let project = try TemporaryDirectory()
        try project.write("a.txt", "base\n")
        do {
            let harness = try await WorkspaceHarness(root: project.path)
            _ = try await harness.write("a.txt", "mine\n")
            await crash(harness)
        }
        try project.write("a.txt", "theirs, while the agent was down\n")
        let restarted = try await WorkspaceHarness(root: project.path)
        let conflict = try #require(restarted.logged("conflict").first)
        let copy = try #require(conflict.fields["copy"])
        #expect(try project.read(copy) == "mine\n")
        #expect(try project.read("a.txt") == "theirs, while the agent was down\n")
        await restarted.stop()
    }
}
