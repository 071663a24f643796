import CSQLite

/// An error type a transaction's body throws that can also carry SQLite's own failures (of
/// `BEGIN` and `COMMIT`), so that `SQLiteDatabase.transaction` keeps its body's typed throws.
public protocol SQLiteErrorConvertible: Error {
    init(_ error: SQLiteError)
}

extension SQLiteError: SQLiteErrorConvertible {
    public init(_ error: SQLiteError) { self = error }
}

/// One connection to an SQLite database file: statements, transactions, and nothing more.
///
/// A thin, typed layer over SQLite's C interface: every failure is an `SQLiteError` naming the
/// file, the statement and SQLite's message. The connection is opened `SQLITE_OPEN_NOMUTEX`, so
/// it is not thread-safe and not `Sendable`: one owner (an actor, a thread) uses it. Extended
/// result codes are on.
public final class SQLiteDatabase {
    /// How a transaction takes its lock.
    public enum TransactionMode: String, Sendable {
        /// `BEGIN DEFERRED`: a consistent snapshot for reads; the write lock only when it writes.
        case deferred = "DEFERRED"
        /// `BEGIN IMMEDIATE`: the write lock at once, so the transaction cannot fail half-way
        /// with `SQLITE_BUSY` when it starts to write.
        case immediate = "IMMEDIATE"
    }

    /// The flags `init` opens with by default: read-write, created when missing, no mutex.
    public static let defaultFlags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_NOFOLLOW

    /// The database file's path, as given.
    public let path: String
    private var handle: OpaquePointer?
    private var cache: [String: SQLiteStatement] = [:]

    /// Opens (with `SQLITE_OPEN_CREATE` in `flags`, creates) the database at `path`.
    ///
    /// SQLite reads nothing of the file yet: a file that is not a database fails at its first
    /// statement (`SQLITE_NOTADB`), not here.
    /// - Parameters:
    ///   - flags: `sqlite3_open_v2`'s flags; `SQLITE_OPEN_EXRESCODE` is always added.
    ///   - busyTimeout: how long a statement waits for another connection's lock before it fails
    ///     with `SQLITE_BUSY`, in milliseconds.
    /// - Throws: `SQLiteError.open` when the file cannot be opened (missing folder, permissions).
    public init(path: String, flags: Int32 = defaultFlags, busyTimeout: Int32 = 5_000) throws(SQLiteError) {
        self.path = path
        var connection: OpaquePointer?
        let result = sqlite3_open_v2(path, &connection, flags | SQLITE_OPEN_EXRESCODE, nil)
        guard result == SQLITE_OK, let connection else {
            let message = connection.flatMap { sqlite3_errmsg($0) }.map { String(cString: $0) } ?? "out of memory"
            sqlite3_close_v2(connection)
            throw .open(path: path, code: result, message: message)
        }
        sqlite3_extended_result_codes(connection, 1)
        sqlite3_busy_timeout(connection, busyTimeout)
        handle = connection
    }

    deinit {
        close()
    }

    /// Whether the connection is open (`close()` not called yet).
    public var isOpen: Bool { handle != nil }

    /// Closes the connection; statements still held elsewhere keep it alive (and working) until
    /// they are released. Every later call on this value throws `SQLiteError.closed`. Closing
    /// twice does nothing.
    public func close() {
        cache.removeAll()
        guard let handle else { return }
        self.handle = nil
        // close_v2, not close: a statement someone still holds defers the close instead of failing it.
        sqlite3_close_v2(handle)
    }

    // MARK: - Statements

    /// Runs one or more statements separated by semicolons, ignoring any rows they return.
    ///
    /// - Throws: `SQLiteError.step` with the statement text and SQLite's message.
    public func execute(_ sql: String) throws(SQLiteError) {
        let connection = try open()
        var error: UnsafeMutablePointer<CChar>?
        let result = sqlite3_exec(connection, sql, nil, nil, &error)
        guard result == SQLITE_OK else {
            let message = error.map { String(cString: $0) } ?? String(cString: sqlite3_errmsg(connection))
            sqlite3_free(error)
            throw .step(path: path, sql: sql, code: result, message: message)
        }
    }

    /// Compiles one statement.
    ///
    /// - Throws: `SQLiteError.prepare` on a syntax error, an unknown table, or a damaged schema.
    public func prepare(_ sql: String) throws(SQLiteError) -> SQLiteStatement {
        try prepare(sql, flags: 0)
    }

    /// The statement for `sql`, compiled once per connection and kept, reset and unbound, ready to
    /// bind: statements run on every record are not compiled again each time.
    ///
    /// The same statement is handed out each time, so one must be done with (run to its end or
    /// reset, as `run()`, `rows(_:)` and `firstRow(_:)` do) before it is asked for again.
    /// - Throws: `SQLiteError.prepare` as `prepare(_:)`.
    public func cached(_ sql: String) throws(SQLiteError) -> SQLiteStatement {
        if let statement = cache[sql] {
            statement.reset()
            return statement
        }
        let statement = try prepare(sql, flags: UInt32(SQLITE_PREPARE_PERSISTENT))
        cache[sql] = statement
        return statement
    }

    /// The rowid of the last row this connection inserted.
    public var lastInsertRowID: Int64 {
        handle.map { sqlite3_last_insert_rowid($0) } ?? 0
    }

    /// Whether a transaction is open on this connection.
    public var isInTransaction: Bool {
        handle.map { sqlite3_get_autocommit($0) == 0 } ?? false
    }

    // MARK: - Transactions

    /// Runs `body` in a transaction: committed when it returns, rolled back when it throws.
    ///
    /// Called inside another transaction, `body` simply runs as part of that one (SQLite has no
    /// nested `BEGIN`), and the outer transaction commits or rolls back the whole.
    /// - Throws: what `body` throws (after the rollback), or the failure of `BEGIN` or `COMMIT`
    ///   made into `Failure` (the transaction is then rolled back).
    public func transaction<Value, Failure: SQLiteErrorConvertible>(
        _ mode: TransactionMode = .immediate, _ body: () throws(Failure) -> Value
    ) throws(Failure) -> Value {
        if isInTransaction { return try body() }
        do {
            try execute("BEGIN \(mode.rawValue)")
        } catch {
            throw Failure(error)
        }
        let value: Value
        do {
            value = try body()
        } catch {
            rollback()
            throw error
        }
        do {
            try execute("COMMIT")
        } catch {
            rollback()
            throw Failure(error)
        }
        return value
    }

    // MARK: - Helpers

    /// Rolls back whatever transaction is open. SQLite may have rolled it back itself already
    /// (after `SQLITE_FULL`, `SQLITE_IOERR`), in which case there is nothing to do.
    private func rollback() {
        guard isInTransaction else { return }
        try? execute("ROLLBACK")
    }

    private func open() throws(SQLiteError) -> OpaquePointer {
        guard let handle else { throw .closed(path: path) }
        return handle
    }

    private func prepare(_ sql: String, flags: UInt32) throws(SQLiteError) -> SQLiteStatement {
        let connection = try open()
        var statement: OpaquePointer?
        let result = sqlite3_prepare_v3(connection, sql, -1, flags, &statement, nil)
        guard result == SQLITE_OK, let statement else {
            sqlite3_finalize(statement)
            let message = result == SQLITE_OK ? "no statement in the text" : String(cString: sqlite3_errmsg(connection))
            throw .prepare(path: path, sql: sql, code: result == SQLITE_OK ? SQLITE_MISUSE : result, message: message)
        }
        return SQLiteStatement(handle: statement, sql: sql, path: path)
    }
}
