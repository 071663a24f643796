import CSQLite
import Glibc

extension VersionStore {
    /// `PRAGMA application_id` of a history database ("ASVH"): another program's SQLite file at
    /// our path is recognised as not ours instead of being written into.
    static let applicationID: Int64 = 0x4153_5648
    /// `PRAGMA user_version` of the schema this code reads and writes.
    static let schemaVersion: Int64 = 3

    /// The tables and indexes of schema version 3 (see the type's documentation).
    ///
    /// The indexes on `contents(base)` and `versions(content)` let a content be deleted (pruning,
    /// `--forget`) without SQLite's foreign-key check scanning both tables for each one.
    static let schema = """
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
            pid INTEGER NULL,
            added INTEGER NULL,
            removed INTEGER NULL,
            parent INTEGER NULL
        );
        CREATE INDEX versions_by_path ON versions(path, id);
        CREATE INDEX versions_by_content ON versions(content);
        PRAGMA application_id = \(applicationID);
        PRAGMA user_version = \(schemaVersion);
        """

    /// What brings a database of schema version 1 to version 2: the line counts, null for the
    /// versions recorded before them (counting them now would decode every version ever kept).
    static let migrationFrom1 = """
        ALTER TABLE versions ADD COLUMN added INTEGER NULL;
        ALTER TABLE versions ADD COLUMN removed INTEGER NULL;
        PRAGMA user_version = 2;
        """

    /// What brings a database of schema version 2 to version 3: a conflict copy's link to the
    /// version it came from (version 2 recorded no copies). A plain integer, not a foreign key:
    /// pruning the parent leaves the copy, whose link then leads nowhere and reads as unknown.
    static let migrationFrom2 = """
        ALTER TABLE versions ADD COLUMN parent INTEGER NULL;
        PRAGMA user_version = 3;
        """

    /// Opens the database at `path`, checked and ready: an existing one whole and ours, a new one
    /// with its schema; WAL, `synchronous=NORMAL`, foreign keys on.
    ///
    /// - Throws: `HistoryError.corrupt` for a file that is not a usable history database;
    ///   `.system` or `.sqlite` when it cannot be opened.
    static func open(_ path: String) throws(HistoryError) -> SQLiteDatabase {
        try createPrivately(path)
        let database: SQLiteDatabase
        do {
            database = try SQLiteDatabase(path: path)
        } catch {
            throw HistoryError(error)
        }
        do {
            try prepare(database)
        } catch {
            database.close()
            throw error
        }
        return database
    }

    /// Creates the file with mode 0600 when it is missing (SQLite gives its -wal and -shm files
    /// the database's mode), makes an existing one 0600, and looks at its header.
    ///
    /// - Throws: `HistoryError.system` when it cannot be created or opened; `.corrupt` when it is
    ///   not a regular file, or too short or wrongly headed to be an SQLite database.
    private static func createPrivately(_ path: String) throws(HistoryError) {
        // A link planted at the database or beside it (its -wal, -shm) would have SQLite write
        // wherever it leads: none is followed, and a database with one is not ours to use.
        for file in [path, path + "-wal", path + "-shm", path + "-journal"] {
            var status = stat()
            guard lstat(file, &status) == 0 else { continue }
            guard status.st_mode & S_IFMT == S_IFREG else {
                throw .corrupt(path: path, detail: "\(file) is not a regular file (a symbolic link, a folder or a device); nothing was written through it")
            }
        }
        // O_NONBLOCK so that a FIFO left at the path is refused below rather than waited on.
        let descriptor = Glibc.open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW, 0o600)
        guard descriptor >= 0 else { throw .system(path: path, operation: "open or create it", errno: errno) }
        defer { Glibc.close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { throw .system(path: path, operation: "stat it", errno: errno) }
        guard status.st_mode & S_IFMT == S_IFREG else { throw .corrupt(path: path, detail: "it is not a regular file") }
        // Versions of every file, secrets included: readable by the owner only, as the files may not be.
        if status.st_mode & 0o777 != 0o600, fchmod(descriptor, 0o600) != 0 {
            throw .system(path: path, operation: "make it private (mode 0600)", errno: errno)
        }
        // Empty: a new database, which SQLite makes of an empty file as of a missing one.
        guard status.st_size > 0 else { return }
        let magic = Array("SQLite format 3\0".utf8)
        guard status.st_size >= 100 else {
            throw .corrupt(path: path, detail: "it is \(status.st_size) bytes long, shorter than a database's header")
        }
        var header = [UInt8](repeating: 0, count: magic.count)
        let read = header.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, $0.count, 0) }
        guard read == magic.count else {
            throw .system(path: path, operation: "read its header", errno: read < 0 ? errno : EIO)
        }
        guard header == magic else { throw .corrupt(path: path, detail: "it does not begin with SQLite's header") }
    }

    /// Checks an existing database (whole, ours, a known schema), sets the connection's pragmas,
    /// and gives a new one its schema.
    private static func prepare(_ database: SQLiteDatabase) throws(HistoryError) {
        let path = database.path
        // Every page of every table and index read once: a truncated or overwritten file is found
        // here, at open, instead of as a wrong answer later.
        let problems = try strings(database, "PRAGMA quick_check")
        guard problems == ["ok"] else {
            throw .corrupt(
                path: path, detail: "PRAGMA quick_check found: " + problems.prefix(3).joined(separator: "; "))
        }
        let objects = try integer(database, "SELECT count(*) FROM sqlite_schema")
        let owner = try integer(database, "PRAGMA application_id")
        let version = try integer(database, "PRAGMA user_version")
        let isEmpty = objects == 0 && owner == 0 && version == 0
        if !isEmpty {
            guard owner == applicationID else {
                throw .corrupt(path: path, detail: "it is another program's SQLite database (application_id \(owner))")
            }
            guard (1...schemaVersion).contains(version) else {
                throw .corrupt(
                    path: path,
                    detail:
                        "its schema version \(version) is not one this autosave knows (\(schemaVersion), or an older one, which it upgrades); a newer one wrote it?"
                )
            }
        }
        // Before the first table, or never: pruning can then give space back with
        // `PRAGMA incremental_vacuum` instead of rewriting the whole file.
        if isEmpty { try execute(database, "PRAGMA auto_vacuum = INCREMENTAL") }
        let mode = try strings(database, "PRAGMA journal_mode = WAL")
        guard mode == ["wal"] else {
            throw .sqlite(
                path: path, operation: "turn on write-ahead logging", code: SQLITE_ERROR,
                message: "the journal mode stays \(mode.first ?? "unknown") (a file system without shared memory?)")
        }
        // NORMAL: commits are not fsynced; `sync()` makes them durable when the agent needs them to be.
        try execute(database, "PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON")
        // A WAL that one large transaction grew is cut back to this after the next checkpoint.
        // Checkpoints every 256 pages (1 MiB; SQLite's default is 4 MiB) and a WAL cut back to
        // 1 MiB after them: the WAL is part of what history costs on disk, and it stayed at about
        // 4 MiB of a 14 MiB store.
        try execute(database, "PRAGMA journal_size_limit = \(1 << 20); PRAGMA wal_autocheckpoint = 256")
        if isEmpty {
            try database.transaction(.immediate) { () throws(HistoryError) in try execute(database, schema) }
        } else if version < schemaVersion {
            // In one transaction: a crash half way leaves the old version, whole, to be migrated next time.
            let steps = [migrationFrom1, migrationFrom2].dropFirst(Int(version) - 1)
            try database.transaction(.immediate) { () throws(HistoryError) in
                for step in steps { try execute(database, step) }
            }
        }
        try execute(database, stampsSchema)
        try execute(database, movesIndex)
    }

    // MARK: - Helpers

    private static func execute(_ database: SQLiteDatabase, _ sql: String) throws(HistoryError) {
        do {
            try database.execute(sql)
        } catch {
            throw HistoryError(error)
        }
    }

    private static func strings(_ database: SQLiteDatabase, _ sql: String) throws(HistoryError) -> [String] {
        do {
            return try database.prepare(sql).rows { (row: SQLiteStatement) throws(SQLiteError) in row.text(at: 0) }
        } catch {
            throw HistoryError(error)
        }
    }

    private static func integer(_ database: SQLiteDatabase, _ sql: String) throws(HistoryError) -> Int64 {
        do {
            return try database.prepare(sql).firstRow { (row: SQLiteStatement) throws(SQLiteError) in row.int64(at: 0) }
                ?? 0
        } catch {
            throw HistoryError(error)
        }
    }
}
