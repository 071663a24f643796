@testable import AutosaveKit
import AutosaveTestKit
import Foundation
import Testing

@Suite struct ReconciliationDecisionTests {
    func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

    @Test func sameBytesAsBaseOrContentChangeNothing() {
        #expect(Reconciliation.decide(base: bytes("a"), content: bytes("b"), disk: bytes("a"), mergeEnabled: true) == .unchanged)
        #expect(Reconciliation.decide(base: bytes("a"), content: bytes("b"), disk: bytes("b"), mergeEnabled: true) == .unchanged)
        #expect(Reconciliation.decide(base: nil, content: nil, disk: nil, mergeEnabled: true) == .unchanged)
    }

    @Test func cleanReloadsAndDirtyMergesOrConflicts() {
        #expect(Reconciliation.decide(base: bytes("a\n"), content: bytes("a\n"), disk: bytes("z\n"), mergeEnabled: true) == .reload)
        #expect(
            Reconciliation.decide(base: bytes("1\n2\n3\n"), content: bytes("one\n2\n3\n"), disk: bytes("1\n2\nthree\n"), mergeEnabled: true)
                == .merge(bytes("one\n2\nthree\n")))
        #expect(Reconciliation.decide(base: bytes("1\n"), content: bytes("a\n"), disk: bytes("b\n"), mergeEnabled: true) == .conflict(.overlap))
        #expect(
            Reconciliation.decide(base: bytes("1\n2\n3\n"), content: bytes("one\n2\n3\n"), disk: bytes("1\n2\nthree\n"), mergeEnabled: false)
                == .conflict(.overlap))
    }

    @Test func aNulByteInTheFirstEightKiBOfAnySideMakesItAConflict() {
        // Each of these would merge cleanly line by line: one side edits the first line, the other the last.
        let base = "1\n2\n3\n", ours = "one\n2\n3\n", theirs = "1\n2\nthree\n"
        func withNul(_ text: String) -> String { text.replacingOccurrences(of: "2", with: "\0") }
        #expect(Reconciliation.decide(base: bytes(withNul(base)), content: bytes(withNul(ours)), disk: bytes(withNul(theirs)), mergeEnabled: true) == .conflict(.binary))
        #expect(Reconciliation.decide(base: bytes(base), content: bytes(ours), disk: bytes(withNul(theirs)), mergeEnabled: true) == .conflict(.binary))
        #expect(Reconciliation.decide(base: bytes(base), content: bytes(withNul(ours)), disk: bytes(theirs), mergeEnabled: true) == .conflict(.binary))
        // A NUL past the first 8 KiB does not count, as in git.
        let padding = String(repeating: "x\n", count: 4100)
        #expect(
            Reconciliation.decide(base: bytes(base + padding), content: bytes(ours + padding), disk: bytes(theirs + padding + "\0\n"), mergeEnabled: true)
                == .merge(bytes("one\n2\nthree\n" + padding + "\0\n")))
        // A clean buffer reloads a binary file as any other.
        #expect(Reconciliation.decide(base: bytes(base), content: bytes(base), disk: bytes(withNul(theirs)), mergeEnabled: true) == .reload)
    }

    @Test func removalRecreatesDirtyAndClosesClean() {
        #expect(Reconciliation.decide(base: bytes("a"), content: bytes("b"), disk: nil, mergeEnabled: true) == .recreate)
        #expect(Reconciliation.decide(base: bytes("a"), content: bytes("a"), disk: nil, mergeEnabled: true) == .close)
        #expect(Reconciliation.decide(base: bytes("a"), content: nil, disk: nil, mergeEnabled: true) == .unchanged)
    }
}

@Suite struct ReconcileTests {
    @Test func aCleanBufferReloads() async throws {
        let harness = try await WorkspaceHarness(files: ["a.txt": "old\n"])
        _ = try await harness.workspace.open("a.txt")
        try harness.project.write("a.txt", "from vim\n")
        await harness.settleExternalChanges()
        #expect(try await harness.text("a.txt") == "from vim\n")
        #expect(try await harness.workspace.read("a.txt").revision == 1)
        #expect(harness.logged("reloaded").first?.fields["path"] == "a.txt")
        // Subscribers get events through their own stream: wait for it rather than race it.
        _ = try await harness.events.first(timeout: .seconds(20), "reloaded event") { $0 == .reloaded(path: "a.txt", revision: 1) }
        await harness.stop()
    }

    @Test func aDirtyBufferMergesAnEditElsewhereAndSavesTheMerge() async throws {
        let harness = try await WorkspaceHarness(files: ["a.txt": "one\ntwo\nthree\n"])
        _ = try await harness.write("a.txt", "ONE\ntwo\nthree\n")
        try runTool("/bin/sed", ["-i", "s/three/THREE/", harness.project.url("a.txt")])
        await harness.settleExternalChanges()
        #expect(try await harness.text("a.txt") == "ONE\ntwo\nTHREE\n")
        #expect(harness.logged("merged").count == 1)
        #expect(await harness.workspace.status().first?.isDirty == true)
        try await harness.advance(by: harness.delay)
        _ = try await harness.logs.first(timeout: .seconds(20), "saved") { $0.event == "saved" }
        #expect(try harness.project.read("a.txt") == "ONE\ntwo\nTHREE\n")
        await harness.stop()
    }

    @Test func aSaveThatFindsAnUnseenEditMergesInsteadOfClobbering() async throws {
        let harness = try await WorkspaceHarness(files: ["a.txt": "one\ntwo\nthree\n"])
        _ = try await harness.write("a.txt", "ONE\ntwo\nthree\n")
        // The external edit lands before the watcher reports it: the save's compare-and-swap catches it.
        try harness.project.write("a.txt", "one\ntwo\nTHREE\n")
        try await harness.workspace.save(["a.txt"])
        #expect(try await harness.text("a.txt") == "ONE\ntwo\nTHREE\n")
        try await harness.workspace.save(["a.txt"])
        #expect(try harness.project.read("a.txt") == "ONE\ntwo\nTHREE\n")
        await harness.stop()
    }

    @Test func overlappingEditsKeepTheDiskVersionAndCopyTheBuffer() async throws {
        let harness = try await WorkspaceHarness(files: ["src/a.txt": "line\n"])
        _ = try await harness.write("src/a.txt", "mine\n")
        try harness.project.write("src/a.txt", "theirs\n")
        await harness.settleExternalChanges()
        #expect(try await harness.text("src/a.txt") == "theirs\n")
        #expect(await harness.workspace.status().first?.isDirty == false)
        let conflict = try #require(harness.logged("conflict").first)
        #expect(conflict.fields["kind"] == "overlap")
        #expect(conflict.fields["kept"] == "disk")
        let copy = try #require(conflict.fields["copy"])
        #expect(copy.hasPrefix(".autosave/conflicts/src/a.txt."))
        #expect(try harness.project.read(copy) == "mine\n")
        #expect(try harness.project.read("src/a.txt") == "theirs\n")
        await harness.stop()
    }

    @Test func binaryFilesAreNeverInterleavedLineByLine() async throws {
        // Issue 15, item 4: these edits touch different "lines" and were merged into a file neither side wrote.
        let harness = try await WorkspaceHarness(files: ["logo.bin": "\u{89}PNG\0\nhead\nbody\ntail\n"])
        _ = try await harness.write("logo.bin", "\u{89}PNG\0\nHEAD\nbody\ntail\n")
        try harness.project.write("logo.bin", "\u{89}PNG\0\nhead\nbody\nTAIL\n")
        await harness.settleExternalChanges()
        let conflict = try #require(harness.logged("conflict").first)
        #expect(conflict.fields["kind"] == "binary")
        #expect(harness.logged("merged").isEmpty)
        #expect(try await harness.text("logo.bin") == "\u{89}PNG\0\nhead\nbody\nTAIL\n")
        let copy = try #require(conflict.fields["copy"])
        #expect(try harness.project.read(copy) == "\u{89}PNG\0\nHEAD\nbody\ntail\n")
        await harness.stop()
    }

    @Test func overlappingEditsCanKeepTheBuffer() async throws {
        let harness = try await WorkspaceHarness(files: ["a.txt": "line\n"]) { $0.conflicts.keep = .buffer }
        _ = try await harness.write("a.txt", "mine\n")
        try harness.project.write("a.txt", "theirs\n")
        await harness.settleExternalChanges()
        let copy = try #require(harness.logged("conflict").first?.fields["copy"])
        #expect(try harness.project.read(copy) == "theirs\n")
        try await harness.workspace.save(["a.txt"])
        #expect(try harness.project.read("a.txt") == "mine\n")
        await harness.stop()
    }

    /// An editor showing the buffer opens it with `keep: .buffer`: what the person sees stays,
    /// whatever the configuration says for everyone else's buffers.
    @Test func aBufferOpenedToKeepItsTextKeepsItOverTheConfiguration() async throws {
        // No autosave meanwhile: a save in flight would meet the tool's write first.
        let harness = try await WorkspaceHarness(files: ["a.txt": "line\n", "b.txt": "line\n"]) { $0.autosave.delayMs = 3_600_000 }
        _ = try await harness.workspace.open("a.txt", keep: .buffer)
        _ = try await harness.write("a.txt", "mine\n")
        _ = try await harness.write("b.txt", "mine\n")
        try harness.project.write("a.txt", "theirs\n")
        try harness.project.write("b.txt", "theirs\n")
        await harness.settleExternalChanges()
        // A loaded machine may see an in-place write's truncation first: then a path has two
        // conflicts, and the last one met the tool's whole text.
        let conflicts = Dictionary(harness.logged("conflict").map { ($0.fields["path"] ?? "", $0.fields) }) { _, last in last }
        #expect(conflicts["a.txt"]?["kept"] == "buffer")
        #expect(try await harness.text("a.txt") == "mine\n")
        #expect(try harness.project.read(try #require(conflicts["a.txt"]?["copy"])) == "theirs\n")
        #expect(conflicts["b.txt"]?["kept"] == "disk", "the configuration's side, for a buffer opened without one")
        #expect(try await harness.text("b.txt") == "theirs\n")
        await harness.stop()
    }

    @Test func identicalConflictCopiesAreKeptOnce() async throws {
        let harness = try await WorkspaceHarness(files: ["a.txt": "line\n"])
        for round in 0..<2 {
            _ = try await harness.write("a.txt", "mine\n")
            try harness.project.write("a.txt", "theirs \(round)\n")
            await harness.settleExternalChanges()
        }
        let copies = try FileManager.default.contentsOfDirectory(atPath: harness.project.url(".autosave/conflicts"))
        #expect(copies.count == 1)
        #expect(harness.logged("conflict").count == 2)
        await harness.stop()
    }

    @Test func aFileRemovedUnderUnsavedEditsIsWrittenAgain() async throws {
        let harness = try await WorkspaceHarness(files: ["a.txt": "x\n"])
        _ = try await harness.write("a.txt", "unsaved\n")
        try harness.project.remove("a.txt")
        await harness.settleExternalChanges()
        #expect(!harness.project.exists("a.txt"), "not before a rename would have settled")
        try await harness.advance(until: "saved", path: "a.txt")
        _ = try await harness.logs.first(timeout: .seconds(20), "saved") { $0.event == "saved" }
        #expect(try harness.project.read("a.txt") == "unsaved\n")
        #expect(harness.logged("conflict").first?.fields["kind"] == "removed")
        await harness.stop()
    }

    @Test func aCleanBufferWhoseFileIsRemovedCloses() async throws {
        let harness = try await WorkspaceHarness(files: ["a.txt": "x\n"])
        _ = try await harness.workspace.open("a.txt")
        try harness.project.remove("a.txt")
        await harness.settleExternalChanges()
        #expect(await harness.workspace.status().isEmpty)
        #expect(harness.logged("removed").first?.fields["path"] == "a.txt")
        #expect(!harness.project.exists("a.txt"))
        await harness.stop()
    }

    @Test func aBufferFollowsItsFileWhenRenamed() async throws {
        let harness = try await WorkspaceHarness(files: ["old.txt": "x\n", "dir/inner.txt": "y\n"])
        _ = try await harness.write("old.txt", "edited\n")
        _ = try await harness.workspace.open("dir/inner.txt")
        try harness.project.rename("old.txt", "new.txt")
        try harness.project.rename("dir", "moved")
        await harness.settleExternalChanges()
        #expect(await harness.workspace.status().map(\.path) == ["moved/inner.txt", "new.txt"])
        try await harness.workspace.save(["new.txt"])
        #expect(try harness.project.read("new.txt") == "edited\n")
        #expect(!harness.project.exists("old.txt"))
        await harness.stop()
    }

    /// `a.txt` edited ("mine"), `b.txt` open (edited to `moverEdit` when given), a file where the
    /// conflicts folder goes, then `b.txt` renamed over `a.txt`; autosaves a minute away.
    static func renameOverABlockedCopy(moverEdit: String?) async throws -> WorkspaceHarness {
        let harness = try await WorkspaceHarness(files: ["a.txt": "a\n", "b.txt": "b\n"]) {
            $0.autosave.delayMs = 60_000
            $0.autosave.maxDelayMs = 60_000
        }
        _ = try await harness.write("a.txt", "mine\n")
        if let moverEdit {
            _ = try await harness.write("b.txt", moverEdit)
        } else {
            _ = try await harness.workspace.open("b.txt")
        }
        try harness.project.write(".autosave/conflicts", "in the way")
        try harness.project.rename("b.txt", "a.txt")
        await harness.settleExternalChanges()
        return harness
    }

    /// A file renamed over another whose buffer has unsaved edits: those edits go to a conflict
    /// copy. When the copy could not be written (here a file stands where the conflicts folder
    /// goes), the buffer used to close anyway and its edits were gone; it now stays aside, and
    /// the copy lands once the way is clear.
    @Test func aBufferRenamedOverKeepsItsEditsUntilTheirCopyLands() async throws {
        let harness = try await Self.renameOverABlockedCopy(moverEdit: "mover\n")
        let failed = try #require(harness.logged("conflict-copy-failed").first)
        #expect(failed.fields["path"] == "a.txt")
        #expect(!(failed.fields["next"] ?? "").contains("lost"), "\(failed.fields)")
        #expect(try await harness.text("a.txt") == "mover\n", "the path is the mover's")

        try harness.project.remove(".autosave/conflicts")
        try await harness.advance(until: "conflict", path: "a.txt", step: .seconds(1), limit: 60)
        let conflict = try #require(harness.logged("conflict").last)
        #expect(conflict.fields["kind"] == "replaced")
        let copy = try #require(conflict.fields["copy"])
        #expect(try harness.project.read(copy) == "mine\n")
        await harness.stop()
    }

    /// The same, with the way never cleared: the flush at stop tries the copy once more and
    /// reports the edits lost, as for any edit that could land nowhere.
    @Test func aBufferRenamedOverWhoseCopyNeverLandsIsReportedLostAtTheFlush() async throws {
        let harness = try await Self.renameOverABlockedCopy(moverEdit: nil)
        #expect(harness.logged("conflict-copy-failed").contains { $0.fields["path"] == "a.txt" })
        let outcome = await harness.workspace.flush()
        #expect(outcome.lost == ["a.txt"])
        #expect(harness.logged("lost-to-disk").contains { $0.fields["path"] == "a.txt" })
        await harness.stop()
    }

    @Test func permissionsSurviveASaveThroughTheBuffer() async throws {
        let harness = try await WorkspaceHarness(files: ["run.sh": "#!/bin/sh\n"])
        chmod(harness.project.url("run.sh"), 0o755)
        _ = try await harness.write("run.sh", "#!/bin/sh\necho hi\n")
        try await harness.workspace.save(["run.sh"])
        #expect((Fingerprint.of(harness.project.url("run.sh"))?.mode ?? 0) & 0o777 == 0o755)
        await harness.stop()
    }
}
