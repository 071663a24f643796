@_spi(Testing) @testable import AutosaveKit
import AutosaveTestKit
import Foundation
import Testing

/// A retry of an edit the client never heard the answer to (the same change id, after a crash and
/// a restart) is applied once.
///
/// The class of bug: state that makes a retry safe kept only in memory. A buffer remembered the
/// change ids it applied while it lived; a restart forgot them, and the retry was applied again
/// (`hello` became `XXhello`). The property: the id of every edit the journal took is remembered
/// across restarts (the latest `RecentChangeIDs.limit`), saved or not.
@Suite struct ChangeIDsAcrossRestartsTests {
    static let insertX = [TextEdit(range: TextRange(start: TextPosition(line: 0, character: 0), end: TextPosition(line: 0, character: 0)), text: Array("X".utf8))]

    @Test(arguments: [false, true])
    func aRetriedEditIsAppliedOnceAfterACrash(savedBeforeTheCrash: Bool) async throws {
        let project = try TemporaryDirectory()
        try project.write("a.txt", "hello\n")
        let id = UUID()
        do {
            let harness = try await WorkspaceHarness(root: project.path)
            try await harness.workspace.acceptEdits("a.txt", Self.insertX, encoding: .utf8, changeID: id).waitUntilDurable()
            if savedBeforeTheCrash { try await harness.workspace.save(["a.txt"]) }
            await harness.workspace._abandon()
        }
        let restarted = try await WorkspaceHarness(root: project.path)
        let retried = try await restarted.workspace.acceptEdits("a.txt", Self.insertX, encoding: .utf8, changeID: id)
        try await retried.waitUntilDurable()
        #expect(try await restarted.text("a.txt") == "Xhello\n", "applied once")
        #expect(retried.revision == (try await restarted.workspace.read("a.txt").revision), "answered with the revision that holds it")
        await restarted.stop()
        #expect(try project.read("a.txt") == "Xhello\n")
        // And a second restart still knows it: the id outlives the journal's rewrite at start.
        let again = try await WorkspaceHarness(root: project.path)
        _ = try await again.workspace.acceptEdits("a.txt", Self.insertX, encoding: .utf8, changeID: id)
        #expect(try await again.text("a.txt") == "Xhello\n")
        await again.stop()
    }

    /// Closing a buffer forgets it, not the ids the journal took for its path.
    @Test func aRetryAfterTheBufferWasClosedIsAppliedOnce() async throws {
        let harness = try await WorkspaceHarness(files: ["a.txt": "hello\n"])
        let id = UUID()
        _ = try await harness.workspace.acceptEdits("a.txt", Self.insertX, encoding: .utf8, changeID: id)
        try await harness.workspace.close("a.txt")
        _ = try await harness.workspace.acceptEdits("a.txt", Self.insertX, encoding: .utf8, changeID: id)
        #expect(try await harness.text("a.txt") == "Xhello\n")
        await harness.stop()
    }
}

/// Edits taken while a save was written stand on what the save wrote: a crash after it landed
/// recovers them onto the file, with no conflict copy.
///
/// The class of bug: a journal record naming a version its edit no longer stands on. Such an
/// edit's record named the version before the save; the save landed, and recovery took the file
/// (the buffer's own save) for a change made while the agent was down and kept both. The
/// property: after a crash, recovery keeps a conflict copy only when the file holds something
/// that is not in the buffer's own history.
@Suite struct EditsDuringASaveRecoveryTests {
    /// `a.txt` written `one`, its save held right before its compare-and-swap, and the buffer
    /// taking `one two` meanwhile (journaled).
    static func editTakenDuringAHeldSave() async throws -> (TemporaryDirectory, WorkspaceHarness, SaveGate, Task<Void, any Error>) {
        let project = try TemporaryDirectory()
        try project.write("a.txt", "zero\n")
        let gate = SaveGate()
        let harness = try await WorkspaceHarness(root: project.path, beforeCommit: gate.pass)
        _ = try await harness.write("a.txt", "one\n")
        let saving = await gate.holdSave(of: "a.txt", in: harness)
        #expect(try await harness.write("a.txt", "one\ntwo\n") == 2)
        return (project, harness, gate, saving)
    }

    /// `a.txt` saved as `one`, while the buffer took `one two` (journaled, unsaved); then a crash.
    static func crashAfterAnEditTakenDuringASave() async throws -> TemporaryDirectory {
        let (project, harness, gate, saving) = try await editTakenDuringAHeldSave()
        gate.release()
        try await saving.value
        #expect(try project.read("a.txt") == "one\n", "the save landed")
        let isDirty = await harness.workspace.status().first?.isDirty
        #expect(isDirty == true, "the edit taken during the save is not in it")
        await harness.workspace._abandon()
        return project
    }

    @Test func anEditTakenWhileASaveWasWrittenComesBackOntoTheSavedFileWithoutACopy() async throws {
        let project = try await Self.crashAfterAnEditTakenDuringASave()
        let restarted = try await WorkspaceHarness(root: project.path)
        #expect(restarted.logged("conflict").isEmpty, "the file holds the save the edit was made on")
        #expect(restarted.workspace.conflictCopyCount() == 0)
        #expect(restarted.logged("recovered").first?.fields["next"] == "saving it after the quiet window")
        #expect(try await restarted.text("a.txt") == "one\ntwo\n")
        await restarted.stop()
        #expect(try project.read("a.txt") == "one\ntwo\n")
    }

    /// A crash in the moment after the save's rename, before the journal hears it landed: the
    /// file holds the save, which the journal knew only as a save begun. (Made here by crashing
    /// while the save is held before its compare-and-swap and writing what it would have renamed
    /// into place, as the rename would have.)
    @Test func aCrashBetweenTheSavesRenameAndItsMarkerKeepsNoCopyEither() async throws {
        let (project, harness, gate, saving) = try await Self.editTakenDuringAHeldSave()
        await harness.workspace._abandon()
        try project.write("a.txt", "one\n")
        let restarted = try await WorkspaceHarness(root: project.path)
        #expect(restarted.logged("conflict").isEmpty, "the file holds the save the edit was made on")
        #expect(restarted.workspace.conflictCopyCount() == 0)
        #expect(try await restarted.text("a.txt") == "one\ntwo\n")
        await restarted.stop()
        #expect(try project.read("a.txt") == "one\ntwo\n")
        // The abandoned save goes on now and finds the file changed under it: it writes nothing.
        gate.release()
        _ = try? await saving.value
        #expect(try project.read("a.txt") == "one\ntwo\n")
    }

    /// A merged revision (an outside edit taken into the client's, never journaled) saved, and a
    /// crash before the journal heard it landed: the file holds a save that has the journaled edit
    /// in it. Recovery took the journaled revision back and saved it over the merge, and the
    /// outside edit was lost (found by the power-cut soak). (The crash comes while the save is
    /// held before its compare-and-swap; what it would have renamed into place is written.)
    @Test func aCrashAfterAMergedRevisionWasSavedKeepsTheMerge() async throws {
        let project = try TemporaryDirectory()
        try project.write("a.txt", "zero\nline\n")
        let gate = SaveGate()
        let harness = try await WorkspaceHarness(root: project.path, beforeCommit: gate.pass)
        _ = try await harness.write("a.txt", "ONE\nline\n")
        try project.write("a.txt", "zero\nline\nTHEIRS\n")
        await harness.settleExternalChanges()
        #expect(try await harness.text("a.txt") == "ONE\nline\nTHEIRS\n", "merged")
        let saving = await gate.holdSave(of: "a.txt", in: harness)
        await harness.workspace._abandon()
        try project.write("a.txt", "ONE\nline\nTHEIRS\n")
        let restarted = try await WorkspaceHarness(root: project.path)
        #expect(try await restarted.text("a.txt") == "ONE\nline\nTHEIRS\n")
        #expect(restarted.logged("conflict").isEmpty)
        await restarted.stop()
        #expect(try project.read("a.txt") == "ONE\nline\nTHEIRS\n", "the outside edit is still there")
        gate.release()
        _ = try? await saving.value
    }

    /// The same, with the file changed by someone else after the save landed: that is a change
    /// made while the agent was down, and both versions are kept.
    @Test func aFileChangedAfterTheSaveLandedStillKeepsBothVersions() async throws {
        let project = try await Self.crashAfterAnEditTakenDuringASave()
        try project.write("a.txt", "theirs\n")
        let restarted = try await WorkspaceHarness(root: project.path)
        let conflict = try #require(restarted.logged("conflict").first)
        #expect(try project.read(try #require(conflict.fields["copy"])) == "one\ntwo\n")
        #expect(try project.read("a.txt") == "theirs\n")
        await restarted.stop()
    }
}
