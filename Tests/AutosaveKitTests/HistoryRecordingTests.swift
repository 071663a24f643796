@testable import AutosaveKit
import AutosaveHistory
import AutosaveTestKit
import Foundation
import Testing

/// What the agent puts in history as it works, on real files and the real inotify: its saves with
/// who made them, outside changes, removals and moves, and the versions a buffer stood on; and
/// what a client gets back.
@Suite struct HistoryRecordingTests {
    func history(_ harness: WorkspaceHarness) async throws -> VersionHistory {
        try #require(await harness.workspace.history, "history is on by default")
    }

    func texts(_ history: VersionHistory, _ path: String) async throws -> [String] {
        var texts: [String] = []
        for version in try await history.versions(at: path) {
            let content = try await history.content(of: path, at: .id(version.id)).content
            texts.append(content.map { String(decoding: $0, as: UTF8.self) } ?? "<none>")
        }
        return texts
    }

    @Test func aSaveIsAVersionNamingTheClientsWhoseEditsItHolds() async throws {
        let harness = try await WorkspaceHarness(files: ["a.txt": "old\n"])
        _ = try await harness.write("a.txt", "mine\n")
        harness.workspace.announceEdit(of: "a.txt", revision: 1, by: "nvim:41")
        harness.workspace.announceEdit(of: "a.txt", revision: 1, by: "cli")
        try await harness.workspace.save(["a.txt"])
        let history = try await history(harness)
        let versions = try await history.versions(at: "a.txt")
        #expect(versions.map(\.kind) == [.saved, .baseline], "the save, and the version the buffer read before it")
        #expect(versions.first?.who == "cli,nvim:41")
        #expect(versions.last?.who == "external")
        #expect(try await texts(history, "a.txt") == ["mine\n", "old\n"])
        let logged = harness.logged("versioned").map { [$0.fields["kind"], $0.fields["who"], $0.fields["bytes"]] }
        #expect(logged == [["baseline", "external", "4"], ["saved", "cli,nvim:41", "5"]], "a debug line per version")
        await harness.stop()
    }

    @Test func anOutsideChangeOverASavedEditLeavesTheSavedEditOneVersionBack() async throws {
        let harness = try await WorkspaceHarness(files: ["a.txt": "old\n"])
        _ = try await harness.write("a.txt", "a morning's work\n")
        try await harness.workspace.save(["a.txt"])
        // As `git checkout -- a.txt` would: the file replaced from outside.
        try harness.project.write("a.txt", "old\n")
        await harness.settleExternalChanges()
        let history = try await history(harness)
        let (before, content) = try await history.content(of: "a.txt", at: .back(1))
        #expect(before.kind == .saved)
        #expect(content == Array("a morning's work\n".utf8))
        #expect(try await history.versions(at: "a.txt").first.map { ($0.kind, $0.who) } ?? (.saved, "") == (.modified, "external"))
        await harness.stop()
    }

    @Test func aConflictCopyIsAVersionOfTheFileLinkedToTheVersionItsEditsWereMadeOn() async throws {
        let harness = try await WorkspaceHarness(files: ["src/a.txt": "line\n"])
        _ = try await harness.write("src/a.txt", "mine\n")
        harness.workspace.announceEdit(of: "src/a.txt", revision: 1, by: "nvim:41")
        try harness.project.write("src/a.txt", "theirs\n")
        await harness.settleExternalChanges()
        let copy = try #require(harness.logged("conflict").first?.fields["copy"])
        let history = try await history(harness)
        let versions = try await history.versions(at: "src/a.txt")
        #expect(versions.map(\.kind) == [.conflictCopy, .modified, .baseline])
        let kept = try #require(versions.first)
        #expect(kept.parent == versions.last?.id, "the edits in the copy were made on the version the buffer read")
        #expect(kept.from == copy, "it names the copy as the log does")
        #expect(kept.who == "nvim:41", "the copy holds nvim's edits")
        #expect(try await history.content(of: "src/a.txt", at: .id(kept.id)).content == Array("mine\n".utf8))
        // `-N` counts what the file held: the copy never was the file.
        #expect(try await history.content(of: "src/a.txt", at: .back(0)).content == Array("theirs\n".utf8))
        #expect(try await history.content(of: "src/a.txt", at: .back(1)).content == Array("line\n".utf8))
        // The buffer took the disk's version: its next save names only who edits it from now on.
        _ = try await harness.write("src/a.txt", "theirs, edited\n")
        harness.workspace.announceEdit(of: "src/a.txt", revision: 3, by: "cli")
        try await harness.workspace.save(["src/a.txt"])
        #expect(try await history.versions(at: "src/a.txt").first.map { [$0.kind.rawValue, $0.who] } == ["saved", "cli"])
        await harness.stop()
    }

    @Test func aCopyOfTheDiskKeptAsideByTheBufferIsTheOutsideChangesOwnVersion() async throws {
        let harness = try await WorkspaceHarness(files: ["a.txt": "line\n"]) { $0.conflicts.keep = .buffer }
        _ = try await harness.write("a.txt", "mine\n")
        try harness.project.write("a.txt", "theirs\n")
        await harness.settleExternalChanges()
        let history = try await history(harness)
        let versions = try await history.versions(at: "a.txt")
        #expect(versions.map(\.kind) == [.conflictCopy, .modified, .baseline])
        #expect(versions.first?.who == "external", "the copy holds an outside writer's bytes")
        #expect(versions.first?.parent == versions[1].id, "it keeps the outside change, recorded just before it")
        await harness.stop()
    }

    @Test func aFileNoBufferHoldsIsRecordedWhenItChangesAndWhenItGoes() async throws {
        let harness = try await WorkspaceHarness(files: ["notes.md": "one\n"])
        let history = try await history(harness)
        // History reads a changed file when it records it, moments after the change settled: a
        // file written again within those moments is recorded once, so the test lets it catch up.
        try harness.project.write("notes.md", "two\n")
        await harness.settleExternalChanges()
        await history.caughtUp()
        try harness.project.write("notes.md", "three\n")
        await harness.settleExternalChanges()
        // Likewise before the removal: read after it, "three" would be gone (a busy machine did it).
        await history.caughtUp()
        try harness.project.remove("notes.md")
        await harness.settleExternalChanges()
        let versions = try await history.versions(at: "notes.md")
        #expect(versions.map(\.kind) == [.removed, .modified, .modified])
        #expect(try await texts(history, "notes.md") == ["three\n", "three\n", "two\n"], "the removal keeps what it removed")
        #expect(try await history.deleted(below: "").map(\.path) == ["notes.md"])
        await harness.stop()
    }

    /// The class: the agent's own events and an outside change after them settling in one window.
    /// A file the agent created and someone removed inside that window existed: its removal is
    /// reported and recorded, not taken for a file created and gone again.
    @Test func aRemovalInTheSameWindowAsTheSaveThatCreatedTheFileIsStillARemoval() async throws {
        let harness = try await WorkspaceHarness()
        _ = try await harness.write("new.txt", "precious\n")
        try await harness.workspace.save(["new.txt"])
        // No settling in between: the manual clock keeps the save's events in the open window.
        try harness.project.remove("new.txt")
        await harness.settleExternalChanges()
        let history = try await history(harness)
        #expect(try await history.versions(at: "new.txt").map(\.kind) == [.removed, .saved])
        #expect(try await history.deleted(below: "").map(\.path) == ["new.txt"])
        let removals = harness.events.elements.filter {
            if case .externalChange(let change) = $0 { return change.kind == .removed && change.path == "new.txt" }
            return false
        }
        #expect(removals.count == 1, "subscribers are told of the removal too")
        await harness.stop()
    }

    @Test func aMovedFileKeepsItsVersionsUnderItsOldName() async throws {
        let harness = try await WorkspaceHarness(files: ["a.txt": "first\n"])
        _ = try await harness.write("a.txt", "second\n")
        try await harness.workspace.save(["a.txt"])
        // The save's own events settle first (a rename inside the same window is a `created`).
        await harness.settleExternalChanges()
        try FileManager.default.moveItem(atPath: harness.project.url("a.txt"), toPath: harness.project.url("b.txt"))
        await harness.settleExternalChanges()
        let history = try await history(harness)
        let versions = try await history.versions(at: "b.txt")
        #expect(versions.map(\.kind) == [.moved, .saved, .baseline])
        #expect(versions.map(\.path) == ["b.txt", "a.txt", "a.txt"])
        #expect(versions.first?.from == "a.txt")
        await harness.stop()
    }

    @Test func aFolderRemovedIsARemovalOfEveryFileHistoryKnowsBelowIt() async throws {
        let harness = try await WorkspaceHarness(files: ["d/x.txt": "x\n", "d/e/y.txt": "y\n", "keep.txt": "k\n"])
        for path in ["d/x.txt", "d/e/y.txt", "keep.txt"] {
            _ = try await harness.write(path, "edited \(path)\n")
        }
        try await harness.workspace.saveAll()
        try FileManager.default.removeItem(atPath: harness.project.url("d"))
        await harness.settleExternalChanges()
        let history = try await history(harness)
        #expect(Set(try await history.deleted(below: "").map(\.path)) == ["d/x.txt", "d/e/y.txt"])
        #expect(try await history.deleted(below: "d/e").map(\.path) == ["d/e/y.txt"])
        await harness.stop()
    }

    @Test func versionsAreAskedForByIdOrByCountBackAndNamedWhenMissing() async throws {
        let harness = try await WorkspaceHarness(files: ["a.txt": "v0\n"])
        for text in ["v1\n", "v2\n"] {
            _ = try await harness.write("a.txt", text)
            try await harness.workspace.save(["a.txt"])
        }
        let history = try await history(harness)
        let versions = try await history.versions(at: "a.txt")
        #expect(try await history.content(of: "a.txt", at: .back(0)).content == Array("v2\n".utf8))
        #expect(try await history.content(of: "a.txt", at: .back(2)).content == Array("v0\n".utf8))
        #expect(try await history.content(of: "a.txt", at: .id(versions[1].id)).content == Array("v1\n".utf8))
        await #expect(throws: HistoryQueryError.noSuchVersion(path: "a.txt", selector: .back(3), count: 3)) {
            try await history.content(of: "a.txt", at: .back(3))
        }
        await #expect(throws: HistoryQueryError.noVersions(path: "never.txt")) { try await history.versions(at: "never.txt") }
        await harness.stop()
    }

    @Test func historyOffMakesNoDatabase() async throws {
        let harness = try await WorkspaceHarness(files: ["a.txt": "old\n"]) { $0.history.enabled = false }
        _ = try await harness.write("a.txt", "mine\n")
        try await harness.workspace.save(["a.txt"])
        #expect(await harness.workspace.history == nil)
        #expect(!harness.project.exists(".autosave/history.sqlite"))
        await harness.stop()
    }

    @Test func aDamagedDatabaseIsKeptAsideAndANewOneStarts() async throws {
        let harness = try await WorkspaceHarness(files: [
            "a.txt": "old\n", ".autosave/history.sqlite": String(repeating: "not a database ", count: 300),
        ])
        let history = try await history(harness)
        _ = try await harness.write("a.txt", "mine\n")
        try await harness.workspace.save(["a.txt"])
        #expect(try await history.versions(at: "a.txt").first?.kind == .saved)
        let corrupt = try #require(harness.logged("history-corrupt").first)
        let keptAs = try #require(corrupt.fields["keptAs"])
        #expect(try String(contentsOfFile: keptAs, encoding: .utf8).hasPrefix("not a database"), "the damaged file is kept, as it was")
        await harness.stop()
    }

    /// The walls: a link planted beside the database (its write-ahead log) would have SQLite
    /// write wherever it leads. It is set aside as a link; what it leads to is untouched.
    @Test func aLinkPlantedBesideTheDatabaseIsNeverWrittenThrough() async throws {
        let outside = try TemporaryDirectory()
        let victim = try outside.write("victim.txt", "VICTIM\n")
        let harness = try await WorkspaceHarness(files: ["a.txt": "old\n", ".autosave/keep": ""])
        await harness.stop()
        try? FileManager.default.removeItem(atPath: harness.project.url(".autosave/history.sqlite-wal"))
        try FileManager.default.createSymbolicLink(atPath: harness.project.url(".autosave/history.sqlite-wal"), withDestinationPath: victim)
        let again = try await WorkspaceHarness(files: [:], root: harness.project.path)
        _ = try await again.write("a.txt", "mine\n")
        try await again.workspace.save(["a.txt"])
        let history = try await history(again)
        #expect(try await history.versions(at: "a.txt").first?.kind == .saved, "a new history started")
        #expect(again.logged("history-corrupt").count == 1)
        #expect(try String(contentsOfFile: victim, encoding: .utf8) == "VICTIM\n", "nothing was written through the link")
        await again.stop()
    }

    @Test func aFileOverTheCapIsNotRecorded() async throws {
        let harness = try await WorkspaceHarness(files: ["big.txt": "small\n"]) { $0.history.maxFileBytes = 16 }
        try harness.project.write("big.txt", String(repeating: "x", count: 100))
        await harness.settleExternalChanges()
        try harness.project.write("small.txt", "tiny\n")
        await harness.settleExternalChanges()
        let history = try await history(harness)
        await #expect(throws: HistoryQueryError.noVersions(path: "big.txt")) { try await history.versions(at: "big.txt") }
        #expect(try await history.versions(at: "small.txt").count == 1)
        await harness.stop()
    }
}
