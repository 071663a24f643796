import AutosaveTestKit
import Testing

@testable import AutosaveHistory

/// One version of a file is found by its id, its place or a time without reading the file's
/// whole history, following the file across moves as `versions(of:)` does; a database written
/// before the index that finds moves gets it when opened, and reads the same.
@Suite struct VersionStoreFindingTests {
    @Test func aVersionIsFoundByIdPlaceAndTimeAcrossAMove() throws {
        let fixture = try HistoryFixture()
        let store = try fixture.open()
        let old1 = try #require(try store.record(input("old.txt", "a", time: 10)))
        let old2 = try #require(try store.record(input("old.txt", "ab", time: 20)))
        let replaced = try #require(try store.record(input("new.txt", "the file that was there before", time: 25)))
        let moved = try #require(try store.record(input("new.txt", nil, .moved, time: 30, from: "old.txt")))
        let edited = try #require(try store.record(input("new.txt", "abc", .modified, time: 40)))

        #expect(try store.version(of: "new.txt", id: old1.id) == old1, "a version from before the move")
        #expect(try store.version(of: "new.txt", id: edited.id) == edited)
        #expect(try store.version(of: "new.txt", id: replaced.id) == nil, "the file that was at new.txt is another file")
        #expect(try store.version(of: "old.txt", id: edited.id) == nil)
        #expect(try store.version(of: "new.txt", id: 999) == nil)
        #expect(try (0..<5).map { try store.version(of: "new.txt", back: $0)?.id } == [edited.id, moved.id, old2.id, old1.id, nil])
        #expect(try store.version(of: "new.txt", atOrBefore: 39) == moved)
        #expect(try store.version(of: "new.txt", atOrBefore: 29) == old2, "before the move: the old name's version")
        #expect(try store.version(of: "new.txt", atOrBefore: 9) == nil)
        #expect(try store.version(of: "nothing.txt", back: 0) == nil)

        // A conflict copy is one of the file's versions, but never what the file held.
        let copy = try #require(
            try store.record(
                VersionInput(
                    path: "new.txt", content: Array("mine".utf8), kind: .conflictCopy, who: "cli", time: 50,
                    from: "new.txt.conflict")))
        #expect(try store.version(of: "new.txt", id: copy.id) == copy)
        #expect(try store.version(of: "new.txt", back: 0) == edited)
        #expect(try store.version(of: "new.txt", back: 4) == nil)
        #expect(try store.version(of: "new.txt", atOrBefore: 60) == edited)
    }

    @Test func aDatabaseWithoutTheMovesIndexGetsItAndReadsTheSame() throws {
        let fixture = try HistoryFixture()
        var store = try fixture.open()
        let first = try #require(try store.record(input("a.txt", "one")))
        let moved = try #require(try store.record(input("b.txt", nil, .moved, from: "a.txt")))
        store.close()
        // As the code before the index left it: the same schema version, without the index.
        let database = try SQLiteDatabase(path: fixture.path)
        try database.execute("DROP INDEX versions_moves")
        database.close()

        store = try fixture.open()
        #expect(try fixture.integer("SELECT count(*) FROM sqlite_schema WHERE name = 'versions_moves'") == 1)
        #expect(try fixture.integer("PRAGMA user_version") == VersionStore.schemaVersion)
        #expect(try (0..<3).map { try store.version(of: "b.txt", back: $0)?.id } == [moved.id, first.id, nil])
        #expect(try store.content(of: first.id) == Array("one".utf8))
        // The walk back across moves reads the index, not every version of the file.
        let reader = try SQLiteDatabase(path: fixture.path)
        defer { reader.close() }
        let plan = try reader.prepare("EXPLAIN QUERY PLAN " + VersionStore.moveBefore).rows {
            (row: SQLiteStatement) throws(SQLiteError) in row.text(at: 3)
        }
        #expect(plan.contains { $0.contains("versions_moves") }, "\(plan)")
    }
}
