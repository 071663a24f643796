import CSQLite
import Glibc

/// Every version of every file the agent recorded, in one SQLite database: what was written, by
/// whom, when, and the bytes, compressed against the version before.
///
/// ## Schema
///
///     contents(id INTEGER PRIMARY KEY AUTOINCREMENT, digest INTEGER, size INTEGER,
///              base INTEGER NULL REFERENCES contents(id), depth INTEGER, data BLOB)
///         index (digest, size), index (base)
///     versions(id INTEGER PRIMARY KEY AUTOINCREMENT, path TEXT, time INTEGER, who TEXT, kind TEXT,
///              content INTEGER NULL REFERENCES contents(id), from_path TEXT NULL, program TEXT NULL,
///              pid INTEGER NULL, added INTEGER NULL, removed INTEGER NULL, parent INTEGER NULL)
///         index (path, id), index (content), index (path, id) of the moves only (`movesIndex`)
///
/// `PRAGMA application_id` marks the file as ours and `PRAGMA user_version` is the schema's
/// version (3): another program's database, or a version this code does not know, is `corrupt`,
/// never read as if it were this one. An older database is brought to version 3 when opened: a
/// version 1 one (without `added` and `removed`) keeps null counts for its versions, a version 2
/// one (without `parent`, which only conflict copies have) none to fill in.
///
/// A `conflict-copy` version is a version of its file that was never on disk at its path (the
/// bytes are in the agent's conflicts folder): every "latest version of a path" here, which the
/// agent reads as "what the file holds", skips copies.
///
/// `added` and `removed` are the lines a version added and removed against the version before it
/// (`LineChanges`), counted when it is recorded, with the previous content at hand (usually in the
/// cache): counting them when history is listed would diff 10,000 pairs of contents.
///
/// ## Why it is stored this way
///
/// - **Prefix dictionaries.** A file's new content is compressed by zstd with the file's previous
///   content as its prefix (`base`), as `zstd --patch-from` does: zstd encodes the unchanged runs as
///   references into the prefix, so a version one line different from the one before costs about
///   a line, not the file: the store grows with the changes, not with the file's size.
/// - **Bounded chains.** Decoding a content means decoding its base first, and the base's base,
///   down to a content compressed on its own (a keyframe, `depth` 0). Every 16th version of a
///   path is a hub, compressed against an earlier hub as skip-deltas go, so a chain is at most 15
///   versions to a hub and then fewer hub steps than the binary digits of the hub's number (about
///   24 frames at 10,000 versions). A content whose depth would still reach `keyframeInterval` is
///   compressed against the ancestor half way up its chain instead. Keyframes every K versions
///   made the store 4-6 times git's pack of the same versions; a fixed ancestor once a chain was
///   full made every later delta grow (see `store`).
/// - **Content addressing.** The same bytes are stored once whatever paths and versions hold them:
///   a file's version is found again by its digest and size, then its bytes are compared, so two
///   different contents whose digests collide are never merged. A repeat of a path's latest content
///   is no new version at all, and a tombstone shares the content it keeps.
/// - **Ids never reused** (`AUTOINCREMENT`): a version's id stays its name for the user, and a
///   content's id can key the in-memory cache of decoded contents without ever going stale.
/// - **Paths are bytes.** Compared with SQLite's default BINARY collation, never `LIKE` (which
///   ignores case); "below a folder" is a range of the index on `path`.
/// - **Durability is `sync()`'s.** The database runs in WAL mode with `synchronous=NORMAL`: a
///   transaction commits without an fsync, and a crash keeps the database consistent but may lose
///   the last versions recorded. `sync()` fsyncs the WAL, after which every version recorded before
///   it survives `kill -9` and a power cut; the agent calls it before it acknowledges a save.
/// - **Damage is recognised at open.** A file that is not a database, or fails `PRAGMA quick_check`,
///   makes `init` throw `HistoryError.corrupt`; the caller moves it aside and starts anew.
///
/// Not `Sendable`: one owner (an actor) uses it, as the connection is opened without SQLite's mutex.
public final class VersionStore {
    /// The database file's path, as given to `init`.
    public let path: String
    /// A content whose chain would reach this depth goes back half way up the chain instead (a
    /// bound hubs keep chains well under).
    let keyframeInterval: Int
    /// The digest of a content; `ContentHash.of` but where a test injects a fault.
    let hash: ([UInt8]) -> UInt64
    /// Nil once closed.
    var database: SQLiteDatabase?
    /// Decoded contents, so the next version of a file finds its base without decoding it.
    var cache = ContentCache(budget: 8 << 20)
    /// What the frames inside a chain are decoded through; kept between reads up to 4 MiB (two
    /// versions of a 2 MiB file).
    let chainBuffers = ChainBuffers(keptBytes: 4 << 20)
    let zstd: Zstd.Contexts
    /// Whether versions were recorded since the last `sync()`.
    var hasUnsyncedVersions = false
    /// The WAL file `sync()` last made durable (device, inode): a new one needs its directory synced.
    var syncedWAL: (device: UInt64, inode: UInt64)?

    /// Opens (creating, mode 0600, WAL, schema) the database at `path`.
    ///
    /// An empty or missing file becomes a new database; its folder must exist. An existing
    /// database's mode is set to 0600 if it was not.
    /// - Parameters:
    ///   - keyframeInterval: the longest chain of frames a read decompresses (at least 1; 1 stores
    ///     every content on its own).
    /// - Throws: `HistoryError.corrupt` when the file is not a history database this code can use
    ///   (not a database, damaged, another program's, an unknown schema version);
    ///   `.system` when the file cannot be created or opened; `.sqlite` for any other failure.
    public convenience init(path: String, keyframeInterval: Int = 64) throws(HistoryError) {
        try self.init(path: path, keyframeInterval: keyframeInterval, faultInjectionHash: ContentHash.of)
    }

    /// Opens the database at `path` with `faultInjectionHash` as the content digest: a test's seam,
    /// to force collisions (a constant) and see that contents are still told apart by their bytes.
    ///
    /// - Throws: as `init(path:keyframeInterval:)`.
    init(
        path: String, keyframeInterval: Int = 64, faultInjectionHash: @escaping ([UInt8]) -> UInt64
    ) throws(HistoryError) {
        self.path = path
        self.keyframeInterval = max(1, keyframeInterval)
        self.hash = faultInjectionHash
        self.zstd = try Zstd.Contexts()
        database = try Self.open(path)
    }

    deinit {
        close()
    }

    /// Makes every version recorded so far durable, then closes the database; later calls throw
    /// `HistoryError.sqlite`. Closing twice does nothing.
    public func close() {
        guard let database else { return }
        try? sync()
        database.close()
        self.database = nil
    }

    /// Bytes the database uses on disk: the sizes of the main file and of its WAL.
    public var bytesOnDisk: Int64 {
        Self.size(of: path) + Self.size(of: path + "-wal")
    }

    // MARK: - Helpers for the extensions

    /// The open connection.
    ///
    /// - Throws: `HistoryError.sqlite` (`SQLITE_MISUSE`) after `close()`.
    func connection() throws(HistoryError) -> SQLiteDatabase {
        guard let database else { throw HistoryError(SQLiteError.closed(path: path)) }
        return database
    }

    /// Runs `body` in a transaction of the open connection (or as part of the one already open).
    func transaction<Value>(
        _ mode: SQLiteDatabase.TransactionMode, _ body: () throws(HistoryError) -> Value
    ) throws(HistoryError) -> Value {
        try connection().transaction(mode, body)
    }

    /// The rows `sql` returns with `arguments` bound, each made into a value by `row`.
    func rows<Row>(
        _ sql: String, _ arguments: [SQLiteValue], _ row: (SQLiteStatement) throws(HistoryError) -> Row
    ) throws(HistoryError) -> [Row] {
        try statement(sql, arguments).rows(row)
    }

    /// Gives `body` each row `sql` returns with `arguments` bound, until it returns false.
    func forEachRow(_ sql: String, _ arguments: [SQLiteValue], _ body: (SQLiteStatement) throws(HistoryError) -> Bool) throws(HistoryError) {
        try statement(sql, arguments).forEachRow(body)
    }

    /// The first row `sql` returns with `arguments` bound, made into a value by `row`; nil when none.
    func firstRow<Row>(
        _ sql: String, _ arguments: [SQLiteValue], _ row: (SQLiteStatement) throws(HistoryError) -> Row
    ) throws(HistoryError) -> Row? {
        try statement(sql, arguments).firstRow(row)
    }

    /// Runs `sql` (an INSERT, an UPDATE) with `arguments` bound.
    func run(_ sql: String, _ arguments: [SQLiteValue]) throws(HistoryError) {
        let prepared = try statement(sql, arguments)
        do {
            try prepared.run()
        } catch {
            throw HistoryError(error)
        }
    }

    private func statement(_ sql: String, _ arguments: [SQLiteValue]) throws(HistoryError) -> SQLiteStatement {
        let database = try connection()
        do {
            let statement = try database.cached(sql)
            try statement.bind(arguments)
            return statement
        } catch {
            throw HistoryError(error)
        }
    }

    /// The file's size; 0 when it does not exist.
    static func size(of path: String) -> Int64 {
        var status = stat()
        return stat(path, &status) == 0 ? Int64(status.st_size) : 0
    }
}
