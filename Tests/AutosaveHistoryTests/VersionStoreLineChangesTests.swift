import AutosaveTestKit
import Foundation
import Testing

@testable import AutosaveHistory

/// Lines added and removed are counted when a version is recorded, against the version before it
/// in the file's history, and kept: listing history reads them, never diffs. A database of schema
/// version 1 is brought to version 2 and keeps every version it had.
@Suite struct VersionStoreLineChangesTests {
    @Test func eachVersionCountsAgainstTheOneBeforeItFollowingMoves() throws {
        let fixture = try HistoryFixture()
        let store = try fixture.open()
        let first = try #require(try store.record(input("a.txt", "one\ntwo\nthree\n", .baseline)))
        let edited = try #require(try store.record(input("a.txt", "one\n2\nthree\nfour\n")))
        let reverted = try #require(try store.record(input("a.txt", "one\ntwo\nthree\n", .modified)))
        let moved = try #require(try store.record(input("b.txt", nil, .moved, from: "a.txt")))
        let afterMove = try #require(try store.record(input("b.txt", "one\nthree\n")))
        let removed = try #require(try store.record(input("b.txt", nil, .removed)))
        let back = try #require(try store.record(input("b.txt", "one\n", .created)))
        let binary = try #require(
            try store.record(
                VersionInput(path: "b.txt", content: [0, 1, 10], kind: .modified, who: "external", time: 2_000)))

        #expect(first.added == nil && first.removed == nil, "a first version has nothing to count against")
        #expect((edited.added, edited.removed) == (2, 1))
        #expect((reverted.added, reverted.removed) == (1, 2), "content history already holds is still counted")
        #expect((moved.added, moved.removed) == (0, 0), "a move changes no line")
        #expect((afterMove.added, afterMove.removed) == (0, 1), "counted against the version it had under its old name")
        #expect(removed.added == nil && removed.removed == nil, "a removal has no lines of its own")
        #expect(back.added == nil, "the file came back: before it, there was none")
        #expect(binary.added == nil && binary.removed == nil)

        let listed = try store.versions(of: "b.txt")
        #expect(listed.map(\.added) == [nil, nil, nil, 0, 0, 1, 2, nil])
        #expect(listed.map(\.removed) == [nil, nil, nil, 1, 0, 2, 1, nil])
        store.close()
        let reopened = try fixture.open()
        #expect(try reopened.versions(of: "b.txt") == listed, "the counts are stored, not computed when listed")
    }

    @Test func aSchemaVersion1DatabaseIsUpgradedAndKeepsItsVersions() throws {
        let fixture = try HistoryFixture()
        let old = Array("kept\nfrom\nversion one\n".utf8)
        try Self.makeVersion1Database(at: fixture.path, holding: old)

        let store = try fixture.open()
        #expect(try fixture.integer("PRAGMA user_version") == 3)
        #expect(
            try fixture.texts(
                "SELECT name FROM pragma_table_info('versions') WHERE name IN ('added', 'removed') ORDER BY name") == [
                    "added", "removed",
                ])
        let versions = try store.versions(of: "notes.txt")
        #expect(versions.map(\.id) == [1])
        #expect(
            versions.first?.added == nil && versions.first?.removed == nil, "versions of schema 1 were never counted")
        #expect(versions.first?.who == "cli")
        #expect(try store.content(of: 1) == old, "the old content reads back byte for byte")

        let next = try #require(try store.record(input("notes.txt", "kept\nfrom\nversion two\n")))
        #expect((next.added, next.removed) == (1, 1), "a new version counts against the one schema 1 stored")
        store.close()
        #expect(
            try fixture.open().versions(of: "notes.txt").map(\.id) == [next.id, 1],
            "opening again migrates nothing twice")
    }

    /// A history database as schema version 1 made it: its tables, and one version of
    /// `notes.txt` holding `content`.
    static func makeVersion1Database(at path: String, holding content: [UInt8]) throws {
        let database = try SQLiteDatabase(path: path)
        defer { database.close() }
        try database.execute(
            """
            PRAGMA auto_vacuum = INCREMENTAL;
            PRAGMA journal_mode = WAL;
            CREATE TABLE contents(
                id INTEGER PRIMARY KEY AUTOINCREMENT,
                digest INTEGER NOT NULL,
                size INTEGER NOT NULL,
                base INTEGER NULL REFERENCES contents(id),
                depth INTEGER NOT NULL,
                data BLOB NOT NULL
            );
            CREATE INDEX contents_by_digest ON contents(digest, size);
            CREATE INDEX contents_by_base ON contents(base);
            CREATE TABLE versions(
                id INTEGER PRIMARY KEY AUTOINCREMENT,
                path TEXT NOT NULL,
                time INTEGER NOT NULL,
                who TEXT NOT NULL,
                kind TEXT NOT NULL,
                content INTEGER NULL REFERENCES contents(id),
                from_path TEXT NULL,
                program TEXT NULL,
                pid INTEGER NULL
            );
            CREATE INDEX versions_by_path ON versions(path, id);
            CREATE INDEX versions_by_content ON versions(content);
            PRAGMA application_id = \(0x4153_5648);
            PRAGMA user_version = 1;
            """)
        let insertContent = try database.prepare(
            "INSERT INTO contents(digest, size, base, depth, data) VALUES (?, ?, NULL, 0, ?)")
        try insertContent.bind(Int64(bitPattern: ContentHash.of(content)), at: 1)
        try insertContent.bind(content.count, at: 2)
        try insertContent.bind(try Zstd.compress(content, prefix: nil), at: 3)
        try insertContent.run()
        try database.execute(
            "INSERT INTO versions(path, time, who, kind, content) VALUES ('notes.txt', 1000, 'cli', 'saved', 1)")
    }
}
