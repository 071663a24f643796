@testable import AutosaveKit
import AutosaveTestKit
import Foundation
import Logging
import Testing

/// Nothing an outside writer writes is lost: a file some process holds open for writing is never
/// replaced under it, and a change it is half way through is not taken for the finished file.
@Suite struct OpenWriterTests {
    /// Opens `path` for writing (appending or truncating), as a logger or a tool would.
    static func openForWriting(_ path: String, appending: Bool) throws -> CInt {
        let fd = open(path, O_WRONLY | O_CLOEXEC | (appending ? O_APPEND : O_TRUNC))
        guard fd >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        return fd
    }

    static func write(_ fd: CInt, _ text: String) {
        _ = Array(text.utf8).withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
    }

    /// Waits (up to 20 s of real time) until the watcher holds `count` names back for a writer.
    static func waitForHeldNames(_ count: Int, in harness: WorkspaceHarness) async -> Bool {
        let deadline = ContinuousClock.now.advanced(by: .seconds(20))
        while ContinuousClock.now < deadline {
            await harness.workspace.watcherBarrier()
            if await harness.workspace.watcherStatus().heldForWriters == count { return true }
            await Task.yield()
        }
        return false
    }

    @Test func aFileOpenForWritingIsHeldAndNoLongerOnceClosed() throws {
        let project = try TemporaryDirectory()
        try project.write("app.log", "line\n")
        #expect(!OpenWriters.isHeld(project.url("app.log")))
        let reader = open(project.url("app.log"), O_RDONLY | O_CLOEXEC)
        #expect(!OpenWriters.isHeld(project.url("app.log")), "a reader writes nothing")
        close(reader)
        let writer = try Self.openForWriting(project.url("app.log"), appending: true)
        #expect(OpenWriters.isHeld(project.url("app.log")))
        close(writer)
        #expect(!OpenWriters.isHeld(project.url("app.log")))
        #expect(!OpenWriters.isHeld(project.url("missing.log")), "nothing there, nothing to protect")
    }

    /// Where leases are refused (another owner's file without CAP_LEASE, FUSE, NFS) the agent
    /// looks at every process's open files; another process's writer is found there too.
    @Test func anotherProcessHoldingTheFileIsFoundThroughProc() async throws {
        let project = try TemporaryDirectory()
        try project.write("app.log", "line\n")
        var status = stat()
        try #require(stat(project.url("app.log"), &status) == 0)
        #expect(!OpenWriters.isOpenForWritingByAnyProcess(device: status.st_dev, inode: status.st_ino))
        // A shell that opens the file for appending, says so, and waits.
        let shell = Process()
        shell.executableURL = URL(fileURLWithPath: "/bin/sh")
        shell.arguments = ["-c", "exec 3>>\"$1\"; echo held; read line", "sh", project.url("app.log")]
        let input = Pipe()
        let output = Pipe()
        shell.standardInput = input
        shell.standardOutput = output
        try shell.run()
        let said = output.fileHandleForReading.availableData
        #expect(String(decoding: said, as: UTF8.self) == "held\n")
        #expect(OpenWriters.isOpenForWritingByAnyProcess(device: status.st_dev, inode: status.st_ino))
        #expect(OpenWriters.isHeld(project.url("app.log")))
        // Killed, not ended by closing its input: a process another test spawns meanwhile may
        // hold a copy of the pipe's end, and the shell would wait for ever. (SIGKILL: the
        // child starts with every other signal blocked, as the thread that spawned it had.)
        kill(shell.processIdentifier, SIGKILL)
        shell.waitUntilExit()
        #expect(!OpenWriters.isOpenForWritingByAnyProcess(device: status.st_dev, inode: status.st_ino))
    }

    /// A logger held app.log open and appended a line every 2 s; after the agent's save of the
    /// header edit, every line went to the replaced inode and was deleted with it.
    @Test func aLoggersLinesAllLandWhenTheHeaderIsEdited() async throws {
        let harness = try await WorkspaceHarness(files: ["app.log": "header\nline 0\n"])
        let logger = try Self.openForWriting(harness.project.url("app.log"), appending: true)
        defer { close(logger) }
        _ = try await harness.write("app.log", "HEADER\nline 0\n")
        try await harness.advance(by: harness.delay)
        // Held open: the autosave waits for the writer, and says so once.
        let waiting = try #require(harness.logged("save-waiting").first)
        #expect(waiting.fields["path"] == "app.log")
        #expect(waiting.fields["reason"] == "open-writer")
        #expect(harness.logged("saved").isEmpty)
        Self.write(logger, "line 1\n")
        await harness.settleExternalChanges()
        #expect(try await harness.text("app.log") == "HEADER\nline 0\nline 1\n", "the logger's line merged under the edit")
        // The writer never closes: once maxDelayMs has passed since the edit, the save writes the
        // file's own inode, where the logger's next lines land after ours.
        try await harness.advance(until: "saved", path: "app.log", step: .milliseconds(500), limit: 40)
        let saved = try #require(harness.logged("saved").first)
        #expect(saved.fields["inPlace"] == "true")
        #expect(saved.fields["reason"] == "open-writer")
        #expect(harness.logged("save-waiting").count == 1, "logged once per wait, not per look")
        Self.write(logger, "line 2\n")
        #expect(try harness.project.read("app.log") == "HEADER\nline 0\nline 1\nline 2\n")
        await harness.settleExternalChanges()
        #expect(try await harness.text("app.log") == "HEADER\nline 0\nline 1\nline 2\n")
        await harness.stop()
    }

    /// A writer that closes the file is waited for, and then the file is replaced as usual.
    @Test func aSaveWaitsForTheWriterToCloseThenReplacesTheFile() async throws {
        let harness = try await WorkspaceHarness(files: ["notes.txt": "a\nb\n"])
        let before = try #require(Fingerprint.of(harness.project.url("notes.txt")))
        let writer = try Self.openForWriting(harness.project.url("notes.txt"), appending: true)
        _ = try await harness.write("notes.txt", "A\nb\n")
        try await harness.advance(by: harness.delay)
        #expect(harness.logged("save-waiting").count == 1)
        Self.write(writer, "c\n")
        close(writer)
        await harness.settleExternalChanges()
        try await harness.advance(until: "saved", path: "notes.txt")
        let saved = try #require(harness.logged("saved").first)
        #expect(saved.fields["inPlace"] == nil, "the writer was gone: replaced atomically")
        #expect(try harness.project.read("notes.txt") == "A\nb\nc\n")
        #expect(Fingerprint.of(harness.project.url("notes.txt"))?.inode != before.inode)
        await harness.stop()
    }

    /// A dirty buffer on data.txt, and a writer that truncated it and wrote half, still holding
    /// it: paused past the settle window, its change is held back.
    static func halfWrittenUnderAnEdit() async throws -> (WorkspaceHarness, CInt) {
        let harness = try await WorkspaceHarness(files: ["data.txt": "a\nb\nc\n"])
        _ = try await harness.write("data.txt", "A\nb\nc\n")
        let writer = try openForWriting(harness.project.url("data.txt"), appending: false)
        write(writer, "a\nb\n")
        await harness.workspace.watcherBarrier()
        try await harness.advance(by: harness.settle * 2)
        #expect(await waitForHeldNames(1, in: harness), "held back while the writer has the file open")
        return (harness, writer)
    }

    /// The writer writes the rest and closes the file; the buffer then saves the whole write
    /// under its edit.
    static func finishTheWriteAndSave(_ writer: CInt, _ harness: WorkspaceHarness) async throws {
        write(writer, "c\nd\n")
        close(writer)
        await harness.settleExternalChanges()
        try await harness.advance(until: "saved", path: "data.txt")
        #expect(try harness.project.read("data.txt") == "A\nb\nc\nd\n", "the whole write and the edit")
    }

    /// A program truncated a file, wrote half, paused, wrote the rest; the agent merged the half
    /// and saved it, and the second half was gone.
    @Test func aWriterThatPausesMidWriteIsNotCutInHalf() async throws {
        let (harness, writer) = try await Self.halfWrittenUnderAnEdit()
        for _ in 0..<8 { try await harness.advance(by: .milliseconds(50)) }
        #expect(harness.logged("external-change").isEmpty && harness.logged("merged").isEmpty)
        #expect(harness.logged("saved").isEmpty)
        #expect(await harness.workspace.watcherStatus().pendingChanges == 1)
        try await Self.finishTheWriteAndSave(writer, harness)
        #expect(harness.logged("conflict").isEmpty)
        await harness.stop()
    }

    /// The same writer found by the autosave itself: the file changed under the edit, but what a
    /// writer holding it has written so far is not merged; the save waits for the close.
    @Test func anAutosaveDoesNotMergeWhatAWriterIsHalfWayThrough() async throws {
        let harness = try await WorkspaceHarness(files: ["data.txt": "a\nb\nc\n"]) { $0.watch.maxSettleMs = 10_000 }
        _ = try await harness.write("data.txt", "A\nb\nc\n")
        let writer = try Self.openForWriting(harness.project.url("data.txt"), appending: false)
        Self.write(writer, "a\nb\n")
        await harness.workspace.watcherBarrier()
        try await harness.advance(by: harness.delay)
        #expect(harness.logged("save-waiting").count == 1, "the autosave waits for the writer")
        #expect(harness.logged("merged").isEmpty, "the half is not taken for the file")
        try await Self.finishTheWriteAndSave(writer, harness)
        #expect(harness.logged("merged").count == 1, "merged once, whole")
        await harness.stop()
    }

    /// Paused past the settle cap (the 1.5 s against `maxSettleMs` 1000), the half is
    /// reported as it is; the buffer still saves nothing while the writer holds the file, so the
    /// rest merges in when it comes and nothing is lost.
    @Test func aWriterPausedPastTheSettleCapStillLosesNothing() async throws {
        let (harness, writer) = try await Self.halfWrittenUnderAnEdit()
        for _ in 0..<30 { try await harness.advance(by: .milliseconds(50)) }
        #expect(await Self.waitForHeldNames(0, in: harness), "reported at the cap, half written")
        #expect(harness.logged("saved").isEmpty, "nothing is written over a file a writer holds")
        try await Self.finishTheWriteAndSave(writer, harness)
        await harness.stop()
    }
}
