import AutosaveTestKit
import Glibc
import Testing

@testable import AutosaveHistory

/// A history database that is not usable is recognised when it is opened, as `corrupt` (the
/// caller sets it aside and starts a new one), and an empty file is simply a new database.
@Suite struct VersionStoreDamageTests {
    /// A database with enough versions to span many pages, closed (its WAL folded in).
    func populatedDatabase() throws -> HistoryFixture {
        let fixture = try HistoryFixture()
        let store = try fixture.open()
        for index in 0..<40 {
            try store.record(
                VersionInput(
                    path: "f\(index).bin", content: randomBytes(20_000, seed: UInt64(index)), kind: .baseline,
                    who: "baseline", time: 1))
        }
        store.close()
        #expect(VersionStore.size(of: fixture.path) > 800_000)
        return fixture
    }

    func expectCorrupt(_ fixture: HistoryFixture, sourceLocation: SourceLocation = #_sourceLocation) {
        let error = historyError({ () throws(HistoryError) in _ = try fixture.open() }, sourceLocation: sourceLocation)
        guard case .corrupt(let path, let detail) = error else {
            Issue.record("expected .corrupt, got \(String(describing: error))", sourceLocation: sourceLocation)
            return
        }
        #expect(path == fixture.path, sourceLocation: sourceLocation)
        #expect(!detail.isEmpty, sourceLocation: sourceLocation)
    }

    @Test func aTruncatedDatabaseIsCorrupt() throws {
        let fixture = try populatedDatabase()
        #expect(truncate(fixture.path, Int(VersionStore.size(of: fixture.path) / 2)) == 0)
        expectCorrupt(fixture)
    }

    @Test func aDatabaseTruncatedInsideItsHeaderIsCorrupt() throws {
        let fixture = try populatedDatabase()
        #expect(truncate(fixture.path, 50) == 0)
        expectCorrupt(fixture)
    }

    @Test func aFileOfGarbageIsCorrupt() throws {
        let fixture = try HistoryFixture()
        try TemporaryDirectory.writeFile(fixture.path, randomBytes(65_536, seed: 9))
        expectCorrupt(fixture)
    }

    @Test func garbageAfterAnSQLiteHeaderIsCorrupt() throws {
        let fixture = try populatedDatabase()
        var file = try readFile(fixture.path)
        // Every page after the first few overwritten: the header is SQLite's, the tables are not.
        let garbage = randomBytes(file.count - 8_192, seed: 10)
        file.replaceSubrange(8_192..., with: garbage)
        try TemporaryDirectory.writeFile(fixture.path, file)
        expectCorrupt(fixture)
    }

    @Test func anEmptyFileIsANewDatabase() throws {
        let fixture = try HistoryFixture()
        try TemporaryDirectory.writeFile(fixture.path, [])
        let store = try fixture.open()
        let version = try #require(try store.record(input("a.txt", "hello")))
        #expect(try store.content(of: version.id) == Array("hello".utf8))
    }

    @Test func anotherProgramsDatabaseIsNotWrittenInto() throws {
        let fixture = try HistoryFixture()
        let other = try SQLiteDatabase(path: fixture.path)
        try other.execute("CREATE TABLE notes(text TEXT); INSERT INTO notes VALUES ('mine')")
        other.close()
        expectCorrupt(fixture)
        #expect(try fixture.texts("SELECT text FROM notes") == ["mine"])
    }

    @Test func aSchemaVersionThisCodeDoesNotKnowIsCorrupt() throws {
        let fixture = try HistoryFixture()
        try fixture.open().close()
        let database = try SQLiteDatabase(path: fixture.path)
        try database.execute("PRAGMA user_version = 99")
        database.close()
        expectCorrupt(fixture)
    }

    @Test func aMissingFolderIsASystemErrorNotCorruption() throws {
        let fixture = try HistoryFixture()
        let error = historyError { () throws(HistoryError) in
            _ = try VersionStore(path: fixture.directory.url("no/such/history.sqlite"))
        }
        guard case .system(_, _, let errno) = error else {
            Issue.record("expected .system, got \(String(describing: error))")
            return
        }
        #expect(errno == ENOENT)
    }
}
