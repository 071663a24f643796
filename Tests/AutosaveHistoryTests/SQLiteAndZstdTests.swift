import Testing

@testable import AutosaveHistory

/// The two C libraries' wrappers: values go into SQLite and come back as they were, transactions
/// are all or nothing, and a zstd frame made against a prefix comes back only with that prefix.
@Suite struct SQLiteAndZstdTests {
    @Test func valuesComeBackAsTheyWereBoundEmptyBlobsAndNullsApart() throws {
        let fixture = try HistoryFixture()
        let database = try SQLiteDatabase(path: fixture.path)
        try database.execute("CREATE TABLE t(i INTEGER, s TEXT, b BLOB)")
        let insert = try database.prepare("INSERT INTO t VALUES (?, ?, ?)")
        try insert.bind([.integer(Int64.min), .text("é\u{0}x"), .blob([])])
        try insert.run()
        try insert.bind(Int?.none, at: 1)
        try insert.bind(String?.none, at: 2)
        try insert.bind([UInt8]?.none, at: 3)
        try insert.run()
        try insert.bind(42, at: 1)
        try insert.bind("", at: 2)
        try insert.bind([0, 255, 0], at: 3)
        try insert.run()
        #expect(database.lastInsertRowID == 3)
        let rows = try database.prepare("SELECT i, s, b FROM t ORDER BY rowid").rows {
            (row: SQLiteStatement) throws(SQLiteError) -> (Int64?, String?, [UInt8]?) in
            (
                row.isNull(at: 0) ? nil : row.int64(at: 0), row.isNull(at: 1) ? nil : row.text(at: 1),
                row.isNull(at: 2) ? nil : row.blob(at: 2)
            )
        }
        #expect(rows.count == 3)
        #expect(rows[0].0 == Int64.min && rows[0].1 == "é\u{0}x" && rows[0].2 == [], "an empty blob is not NULL")
        #expect(rows[1].0 == nil && rows[1].1 == nil && rows[1].2 == nil)
        #expect(rows[2].0 == 42 && rows[2].1 == "" && rows[2].2 == [0, 255, 0], "an empty text is not NULL")
    }

    @Test func aTransactionIsAllOrNothingAndANestedOneJoinsIt() throws {
        struct Refusal: SQLiteErrorConvertible {
            init(_ error: SQLiteError) {}
            init() {}
        }
        let fixture = try HistoryFixture()
        let database = try SQLiteDatabase(path: fixture.path)
        try database.execute("CREATE TABLE t(i INTEGER)")
        #expect(throws: Refusal.self) {
            try database.transaction { () throws(Refusal) in
                try? database.execute("INSERT INTO t VALUES (1)")
                try database.transaction { () throws(Refusal) in try? database.execute("INSERT INTO t VALUES (2)") }
                throw Refusal()
            }
        }
        #expect(!database.isInTransaction)
        let count = { () throws(SQLiteError) -> Int64? in
            try database.prepare("SELECT count(*) FROM t").firstRow { (row: SQLiteStatement) throws(SQLiteError) in
                row.int64(at: 0)
            }
        }
        #expect(try count() == 0, "rolled back, the nested part too")
        try database.transaction { () throws(SQLiteError) in
            try database.execute("INSERT INTO t VALUES (1)")
            try database.transaction { () throws(SQLiteError) in try database.execute("INSERT INTO t VALUES (2)") }
        }
        #expect(try count() == 2)
    }

    @Test func sqliteErrorsNameTheFileTheStatementAndSQLitesMessage() throws {
        let fixture = try HistoryFixture()
        let database = try SQLiteDatabase(path: fixture.path)
        do {
            _ = try database.prepare("SELECT missing FROM nowhere")
            Issue.record("prepared a statement on a missing table")
        } catch {
            #expect(error.description.contains(fixture.path))
            #expect(error.description.contains("prepare `SELECT missing FROM nowhere`"))
            #expect(error.description.contains("no such table: nowhere"))
            #expect(error.description.hasSuffix("(code 1)"))
        }
        database.close()
        #expect(throws: SQLiteError.closed(path: fixture.path)) { try database.execute("SELECT 1") }
    }

    @Test func aFrameComesBackWithItsPrefixAndCostsAboutTheChange() throws {
        // Larger than zstd's default window at level 3 (2 MiB), so the window must be widened.
        let old = text(lines: 3 * 16_384, seed: 31)
        var new = old
        new.replaceSubrange(64 * 40_000..<(64 * 40_000 + 10), with: Array("CHANGED!!!".utf8))
        let alone = try Zstd.compress(new, prefix: nil)
        let delta = try Zstd.compress(new, prefix: old)
        #expect(delta.count < 1_000, "\(delta.count) bytes against \(alone.count) alone")
        #expect(try Zstd.decompress(delta, prefix: old, size: new.count) == new)
        #expect(try Zstd.decompress(alone, prefix: nil, size: new.count) == new)
        #expect(throws: HistoryError.self, "without its prefix, a delta does not decode") {
            try Zstd.decompress(delta, prefix: nil, size: new.count)
        }
        #expect(throws: HistoryError.self, "with another prefix, the checksum fails") {
            try Zstd.decompress(delta, prefix: text(lines: 3 * 16_384, seed: 32), size: new.count)
        }
        #expect(throws: HistoryError.self, "a size other than the frame's is refused") {
            try Zstd.decompress(alone, prefix: nil, size: new.count - 1)
        }
        #expect(try Zstd.decompress(try Zstd.compress([], prefix: old), prefix: old, size: 0) == [])
        #expect(Zstd.windowLog(covering: 1) == 10)
        #expect(Zstd.windowLog(covering: 6 << 20) == 23)
        #expect(Zstd.windowLog(covering: 1 << 40) == 27)
    }
}
