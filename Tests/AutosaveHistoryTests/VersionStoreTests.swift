import AutosaveKit
import Glibc
import Testing

@testable import AutosaveHistory

/// What a user of history notices: every version comes back with who wrote it, when, and its
/// exact bytes; repeats are not versions; removed files can be brought back; a moved file keeps
/// its past; a folder's history is its own files' and no neighbour's.
@Suite struct VersionStoreTests {
    @Test func versionsOfSeveralPathsComeBackNewestFirstWithTheirMetadataAndExactBytes() throws {
        let fixture = try HistoryFixture()
        let store = try fixture.open()
        let big = randomBytes(1 << 20, seed: 7)
        let binary: [UInt8] = [0, 1, 0, 0, 255, 0, 10, 13, 0]
        let recorded = try [
            try store.record(
                VersionInput(
                    path: "a.txt", content: Array("one\n".utf8), kind: .created, who: "external", time: 1_000,
                    program: "vim", pid: 4_242)),
            try store.record(VersionInput(path: "b.bin", content: binary, kind: .saved, who: "nvim:123", time: 2_000)),
            try store.record(
                VersionInput(path: "a.txt", content: [], kind: .modified, who: "external", time: 3_000, program: "sh")),
            try store.record(
                VersionInput(path: "big.dat", content: big, kind: .baseline, who: "baseline", time: 4_000)),
            try store.record(
                VersionInput(path: "a.txt", content: Array("two\n".utf8), kind: .saved, who: "mcp:claude", time: 5_000)),
        ].map { try #require($0) }
        #expect(recorded.map(\.id) == recorded.map(\.id).sorted(), "ids grow with every version, across paths")
        #expect(Set(recorded.map(\.id)).count == 5)

        let history = try store.versions(of: "a.txt")
        #expect(history.map(\.id) == [recorded[4].id, recorded[2].id, recorded[0].id])
        #expect(history.map(\.kind) == [.saved, .modified, .created])
        #expect(history.map(\.who) == ["mcp:claude", "external", "external"])
        #expect(history.map(\.time) == [5_000, 3_000, 1_000])
        #expect(history.map(\.size) == [4, 0, 4])
        #expect(history.map(\.program) == [nil, "sh", "vim"])
        #expect(history.map(\.pid) == [nil, nil, 4_242])
        #expect(history.map(\.from) == [nil, nil, nil])
        #expect(
            history == Array(recorded.filter { $0.path == "a.txt" }.reversed()),
            "what record returned is what history shows")
        #expect(try store.versions(of: "a.txt", limit: 2).map(\.id) == [recorded[4].id, recorded[2].id])
        #expect(try store.versions(of: "nowhere.txt").isEmpty)

        #expect(try store.content(of: recorded[0].id) == Array("one\n".utf8))
        #expect(try store.content(of: recorded[1].id) == binary, "NULs and all")
        #expect(try store.content(of: recorded[2].id) == [], "an empty file is an empty content, not none")
        #expect(try store.content(of: recorded[3].id) == big, "1 MiB, byte for byte")
        #expect(try store.content(of: recorded[4].id) == Array("two\n".utf8))
        #expect(try store.content(of: 999_999) == nil)

        #expect(try store.version(recorded[1].id) == recorded[1])
        #expect(try store.version(999_999) == nil)
        #expect(try store.latest(of: "a.txt") == recorded[4])
        #expect(try store.latest(of: "nowhere.txt") == nil)
        #expect(recorded[3].digest == ContentDigest.of(big), "the agent's own digest of a file matches a version's")
        #expect(recorded[2].digest == ContentDigest.of([UInt8]()))
    }

    @Test func versionsSurviveClosingAndReopening() throws {
        let fixture = try HistoryFixture()
        var store = try fixture.open()
        let first = try #require(try store.record(input("a.txt", "first")))
        let second = try #require(try store.record(input("a.txt", "second")))
        try store.sync()
        store.close()
        #expect(throws: HistoryError.self, "a closed store refuses, rather than crashing") {
            try store.latest(of: "a.txt")
        }
        store = try fixture.open()
        #expect(try store.versions(of: "a.txt") == [second, first])
        #expect(try store.content(of: first.id) == Array("first".utf8))
        let third = try #require(try store.record(input("a.txt", "third")))
        #expect(third.id > second.id, "ids are never reused")
    }

    @Test func aRepeatOfTheLatestContentIsNotANewVersion() throws {
        let fixture = try HistoryFixture()
        let store = try fixture.open()
        let saved = try #require(try store.record(input("a.txt", "same", .saved)))
        for kind in [VersionKind.saved, .modified, .created, .baseline] {
            #expect(try store.record(input("a.txt", "same", kind, who: "external")) == nil, "\(kind) of the same bytes")
        }
        #expect(try store.versions(of: "a.txt") == [saved])

        // The same bytes as an older version are a new version: the file went back.
        let changed = try #require(try store.record(input("a.txt", "changed", .modified)))
        let back = try #require(try store.record(input("a.txt", "same", .modified)))
        #expect(try store.versions(of: "a.txt").map(\.id) == [back.id, changed.id, saved.id])

        // Events of their own are versions even with the same bytes.
        let restored = try #require(try store.record(input("a.txt", "same", .restored, who: "restore")))
        #expect(restored.kind == .restored)
        #expect(try fixture.integer("SELECT count(*) FROM contents") == 2, "\"same\" and \"changed\", each stored once")
    }

    @Test func aRemovalIsATombstoneThatKeepsTheContentUntilThePathComesBack() throws {
        let fixture = try HistoryFixture()
        let store = try fixture.open()
        let saved = try #require(try store.record(input("d/a.txt", "keep me")))
        try store.record(input("other.txt", "x"))
        let tombstone = try #require(try store.record(input("d/a.txt", nil, .removed, who: "external")))
        #expect(tombstone.kind == .removed)
        #expect(tombstone.size == 7)
        #expect(tombstone.digest == saved.digest)
        #expect(try store.content(of: tombstone.id) == Array("keep me".utf8), "a tombstone keeps the last content")
        #expect(try store.deleted(below: "") == [tombstone])
        #expect(try store.deleted(below: "d") == [tombstone])
        #expect(try store.deleted(below: "other.txt").isEmpty)
        #expect(try store.latest(of: "d/a.txt") == tombstone)

        // Back with the very content it had: still a new version, and no longer deleted.
        let back = try #require(try store.record(input("d/a.txt", "keep me", .created, who: "external")))
        #expect(try store.deleted(below: "").isEmpty)
        #expect(try store.versions(of: "d/a.txt").map(\.id) == [back.id, tombstone.id, saved.id])

        // A removal of a path never recorded is a tombstone without content.
        let unknown = try #require(try store.record(input("never.txt", nil, .removed)))
        #expect(unknown.size == nil && unknown.digest == nil)
        #expect(try store.content(of: unknown.id) == nil)
        #expect(try store.deleted(below: "") == [unknown])
    }

    @Test func aMovedFileKeepsTheVersionsItHadUnderItsOldName() throws {
        let fixture = try HistoryFixture()
        let store = try fixture.open()
        let old1 = try #require(try store.record(input("old.txt", "a")))
        let old2 = try #require(try store.record(input("old.txt", "ab")))
        let replaced = try #require(try store.record(input("new.txt", "the file that was there before")))
        let moved = try #require(try store.record(input("new.txt", nil, .moved, who: "external", from: "old.txt")))
        #expect(moved.from == "old.txt")
        #expect(moved.size == 2, "a move without bytes takes the old path's latest content")
        #expect(try store.content(of: moved.id) == Array("ab".utf8))
        let edited = try #require(try store.record(input("new.txt", "abc", .modified)))
        // A new file at the old name later is another file: not in new.txt's past.
        let newcomer = try #require(try store.record(input("old.txt", "zzz", .created)))

        #expect(try store.versions(of: "new.txt").map(\.id) == [edited.id, moved.id, old2.id, old1.id])
        #expect(try store.versions(of: "new.txt", limit: 2).map(\.id) == [edited.id, moved.id])
        #expect(try store.versions(of: "new.txt", limit: 3).map(\.id) == [edited.id, moved.id, old2.id])
        #expect(try store.versions(of: "old.txt").map(\.id) == [newcomer.id, old2.id, old1.id])
        #expect(
            try store.versions(below: "").contains(replaced),
            "the replaced file's version is still in the tree's history")

        // Moved back and forth: followed each way, each version once.
        let back = try #require(try store.record(input("old.txt", nil, .moved, from: "new.txt")))
        #expect(try store.content(of: back.id) == Array("abc".utf8))
        #expect(try store.versions(of: "old.txt").map(\.id) == [back.id, edited.id, moved.id, old2.id, old1.id])
    }

    @Test func aFoldersHistoryIsItsOwnFilesAndNoNeighboursWhateverSortsAroundTheSlash() throws {
        let fixture = try HistoryFixture()
        let store = try fixture.open()
        var ids: [String: Int64] = [:]
        for path in ["d", "d/x", "d.txt", "d-x", "dd/y", "D/x", "c/x", "d/sub/y", "e", "d0", "d!"] {
            ids[path] = try #require(try store.record(input(path, "content of \(path)"))).id
        }
        let inside = [ids["d/sub/y"]!, ids["d/x"]!, ids["d"]!]
        #expect(try store.versions(below: "d").map(\.id) == inside)
        #expect(try store.versions(below: "d/").map(\.id) == inside, "a trailing slash names the same folder")
        #expect(try store.versions(below: "d", limit: 2).map(\.id) == Array(inside.prefix(2)))
        #expect(try store.versions(below: "d/sub").map(\.id) == [ids["d/sub/y"]!])
        #expect(try store.versions(below: "D").map(\.id) == [ids["D/x"]!], "names compare as bytes: case matters")
        #expect(try store.versions(below: "").count == 11)
        #expect(try store.versions(below: "", limit: 3).map(\.id) == [ids["d!"]!, ids["d0"]!, ids["e"]!])
        #expect(try store.versions(below: "nothing").isEmpty)
    }

    @Test func namesWithWildcardsAndOtherScriptsAreTakenLiterally() throws {
        let fixture = try HistoryFixture()
        let store = try fixture.open()
        let percent = try #require(try store.record(input("50%/a_b.txt", "x")))
        try store.record(input("50x/a_b.txt", "y"))
        let accented = try #require(try store.record(input("café/naïve.txt", "z")))
        #expect(try store.versions(below: "50%").map(\.id) == [percent.id])
        #expect(try store.versions(below: "café") == [accented])
        #expect(try store.versions(of: "café/naïve.txt") == [accented])
    }

    @Test func theSameBytesAtTwoPathsAreStoredOnce() throws {
        let fixture = try HistoryFixture()
        let store = try fixture.open()
        let bytes = text(lines: 2_000, seed: 3)
        let a = try #require(
            try store.record(VersionInput(path: "a.txt", content: bytes, kind: .saved, who: "cli", time: 1)))
        let b = try #require(
            try store.record(VersionInput(path: "copy/b.txt", content: bytes, kind: .created, who: "external", time: 2))
        )
        let c = try #require(
            try store.record(VersionInput(path: "a.txt", content: bytes + [10], kind: .saved, who: "cli", time: 3)))
        let d = try #require(
            try store.record(VersionInput(path: "third.txt", content: bytes, kind: .baseline, who: "baseline", time: 4))
        )
        #expect(a.digest == b.digest && b.digest == d.digest)
        #expect(try fixture.integer("SELECT count(*) FROM contents") == 2, "one content for a, b and d; one for c")
        #expect(try fixture.integer("SELECT count(DISTINCT content) FROM versions") == 2)
        for version in [a, b, d] {
            #expect(try store.content(of: version.id) == bytes)
        }
        #expect(try store.content(of: c.id) == bytes + [10])
    }

    @Test func theDatabaseAndItsWALArePrivateAndTheJournalIsWriteAhead() throws {
        let fixture = try HistoryFixture()
        let store = try fixture.open()
        try store.record(input("secret.txt", "password"))
        for file in [fixture.path, fixture.path + "-wal", fixture.path + "-shm"] {
            var status = stat()
            #expect(stat(file, &status) == 0, "\(file) exists")
            #expect(status.st_mode & 0o777 == 0o600, "\(file) is mode \(String(status.st_mode & 0o777, radix: 8))")
        }
        #expect(try fixture.texts("PRAGMA journal_mode") == ["wal"])
        #expect(store.bytesOnDisk > 0)
        #expect(store.bytesOnDisk == VersionStore.size(of: fixture.path) + VersionStore.size(of: fixture.path + "-wal"))
    }

    @Test func anExistingFileOpenToOthersIsMadePrivate() throws {
        let fixture = try HistoryFixture()
        let descriptor = open(fixture.path, O_WRONLY | O_CREAT, 0o644)
        close(descriptor)
        chmod(fixture.path, 0o644)
        _ = try fixture.open()
        var status = stat()
        stat(fixture.path, &status)
        #expect(status.st_mode & 0o777 == 0o600)
    }

    @Test func syncIsCheapWhenNothingIsNewAndLeavesEveryVersionReadable() throws {
        let fixture = try HistoryFixture()
        let store = try fixture.open()
        try store.sync()
        try store.record(input("a.txt", "one"))
        try store.sync()
        try store.sync()
        #expect(!store.hasUnsyncedVersions)
        try store.record(input("a.txt", "one"))
        #expect(!store.hasUnsyncedVersions, "a repeat records nothing, so there is nothing to sync")
        try store.record(input("a.txt", "two"))
        #expect(store.hasUnsyncedVersions)
        try store.sync()
        #expect(try store.versions(of: "a.txt").count == 2)
    }

    @Test func errorsNameTheDatabaseWhatFailedAndWhatHappensNext() {
        let corrupt = HistoryError.corrupt(
            path: "/x/.autosave/history.sqlite", detail: "it does not begin with SQLite's header")
        #expect(corrupt.description.contains("/x/.autosave/history.sqlite"))
        #expect(corrupt.description.contains("set aside"))
        let sqlite = HistoryError(
            SQLiteError.prepare(
                path: "/x/h.sqlite", sql: "SELECT\n  nothing", code: 1, message: "no such column: nothing"))
        #expect(
            sqlite.description
                == "history database /x/h.sqlite: cannot prepare `SELECT nothing`: no such column: nothing (code 1)")
        let system = HistoryError.system(path: "/x/h.sqlite-wal", operation: "sync it", errno: EIO)
        #expect(system.description.contains("/x/h.sqlite-wal") && system.description.contains("errno \(EIO)"))
        if case .corrupt = HistoryError(
            SQLiteError.step(path: "/x", sql: "SELECT 1", code: 26, message: "file is not a database"))
        {
        } else {
            Issue.record("SQLITE_NOTADB is corruption")
        }
    }
}
