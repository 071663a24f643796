import CSQLite

/// One compiled SQL statement: bind its parameters, step through its rows, read their columns.
///
/// Parameters are numbered from 1 and columns from 0, as in SQLite's C interface. Bound strings
/// and blobs are copied by SQLite (`SQLITE_TRANSIENT`), so the Swift values may go away before
/// the statement runs. A statement outlives a `close()` of its database safely: SQLite keeps the
/// connection until the last statement is finalized, and this one is finalized when released.
/// Not thread-safe (the connection is opened `SQLITE_OPEN_NOMUTEX`): one owner uses it.
public final class SQLiteStatement {
    /// The statement's text, for error messages.
    public let sql: String
    /// The database file, for error messages.
    public let path: String
    private let handle: OpaquePointer

    init(handle: OpaquePointer, sql: String, path: String) {
        self.handle = handle
        self.sql = sql
        self.path = path
    }

    deinit {
        sqlite3_finalize(handle)
    }

    // MARK: - Binding

    /// Binds an integer, or NULL for nil.
    ///
    /// - Throws: `SQLiteError.bind` when the index is out of range or the statement is running.
    public func bind(_ value: Int64?, at index: Int32) throws(SQLiteError) {
        guard let value else { return try bindNull(at: index) }
        try check(sqlite3_bind_int64(handle, index, value), binding: index)
    }

    /// Binds an integer, or NULL for nil.
    ///
    /// - Throws: `SQLiteError.bind` when the index is out of range or the statement is running.
    public func bind(_ value: Int?, at index: Int32) throws(SQLiteError) {
        try bind(value.map(Int64.init), at: index)
    }

    /// Binds text (its UTF-8 bytes, all of them), or NULL for nil.
    ///
    /// - Throws: `SQLiteError.bind` when the index is out of range or the statement is running.
    public func bind(_ value: String?, at index: Int32) throws(SQLiteError) {
        guard let value else { return try bindNull(at: index) }
        // An explicit length, not -1: SQLite then takes every byte, whatever they are.
        let length = value.utf8.count
        let result = value.withCString {
            sqlite3_bind_text64(handle, index, $0, sqlite3_uint64(length), Self.transient, UInt8(SQLITE_UTF8))
        }
        try check(result, binding: index)
    }

    /// Binds a blob, or NULL for nil. An empty blob stays an empty blob, not NULL.
    ///
    /// - Throws: `SQLiteError.bind` when the index is out of range, the statement is running or
    ///   the blob exceeds SQLite's limit.
    public func bind(_ value: [UInt8]?, at index: Int32) throws(SQLiteError) {
        guard let value else { return try bindNull(at: index) }
        // SQLite binds a null pointer as NULL, and an empty array may have no storage at all.
        guard !value.isEmpty else { return try check(sqlite3_bind_zeroblob(handle, index, 0), binding: index) }
        let result = value.withUnsafeBytes {
            sqlite3_bind_blob64(handle, index, $0.baseAddress, sqlite3_uint64($0.count), Self.transient)
        }
        try check(result, binding: index)
    }

    /// Binds NULL.
    ///
    /// - Throws: `SQLiteError.bind` when the index is out of range or the statement is running.
    public func bindNull(at index: Int32) throws(SQLiteError) {
        try check(sqlite3_bind_null(handle, index), binding: index)
    }

    // MARK: - Running

    /// Runs the statement to its next row.
    ///
    /// After a failure the statement is reset, so it can be bound and run again.
    /// - Returns: true when a row is ready to read, false when the statement is done.
    /// - Throws: `SQLiteError.step` with SQLite's code (`SQLITE_BUSY`, `SQLITE_CORRUPT`, …).
    public func step() throws(SQLiteError) -> Bool {
        let result = sqlite3_step(handle)
        switch result {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default:
            let error = SQLiteError.step(path: path, sql: sql, code: result, message: Self.message(of: handle))
            sqlite3_reset(handle)
            throw error
        }
    }

    /// Runs a statement that returns no rows (or whose rows do not matter) to its end, then resets it.
    ///
    /// - Throws: `SQLiteError.step` when running it fails.
    public func run() throws(SQLiteError) {
        while try step() {}
        reset()
    }

    /// Every row the statement returns, each made into a value by `row`; then resets it.
    ///
    /// - Throws: what `row` throws, or running the statement's failure made into `Failure`.
    public func rows<Row, Failure: SQLiteErrorConvertible>(
        _ row: (SQLiteStatement) throws(Failure) -> Row
    ) throws(Failure) -> [Row] {
        var rows: [Row] = []
        try forEachRow { statement throws(Failure) in
            rows.append(try row(statement))
            return true
        }
        return rows
    }

    /// Gives `body` each row the statement returns, until it returns false or the rows end;
    /// then resets it. Rows taken one by one go where they are needed, with no array between.
    ///
    /// - Throws: what `body` throws, or running the statement's failure made into `Failure`.
    public func forEachRow<Failure: SQLiteErrorConvertible>(_ body: (SQLiteStatement) throws(Failure) -> Bool) throws(Failure) {
        defer { reset() }
        while try step(as: Failure.self), try body(self) {}
    }

    /// The first row the statement returns made into a value by `row` (nil when none); then resets it.
    ///
    /// - Throws: what `row` throws, or running the statement's failure made into `Failure`.
    public func firstRow<Row, Failure: SQLiteErrorConvertible>(
        _ row: (SQLiteStatement) throws(Failure) -> Row
    ) throws(Failure) -> Row? {
        defer { reset() }
        return try step(as: Failure.self) ? try row(self) : nil
    }

    /// Makes the statement ready to run again and clears its bindings.
    public func reset() {
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
    }

    // MARK: - Columns of the current row

    /// The column as an integer (0 for NULL).
    public func int64(at column: Int32) -> Int64 {
        sqlite3_column_int64(handle, column)
    }

    /// The column as text (empty for NULL).
    public func text(at column: Int32) -> String {
        // The pointer first, then the length: asking for the text may convert it and change its length.
        guard let bytes = sqlite3_column_text(handle, column) else { return "" }
        let count = Int(sqlite3_column_bytes(handle, column))
        return String(decoding: UnsafeBufferPointer(start: bytes, count: count), as: UTF8.self)
    }

    /// The column as bytes (empty for NULL or an empty blob).
    public func blob(at column: Int32) -> [UInt8] {
        guard let bytes = sqlite3_column_blob(handle, column) else { return [] }
        let count = Int(sqlite3_column_bytes(handle, column))
        return Array(UnsafeRawBufferPointer(start: bytes, count: count))
    }

    /// Whether the column is NULL.
    public func isNull(at column: Int32) -> Bool {
        sqlite3_column_type(handle, column) == SQLITE_NULL
    }

    // MARK: - Helpers

    private func step<Failure: SQLiteErrorConvertible>(as _: Failure.Type) throws(Failure) -> Bool {
        do {
            return try step()
        } catch {
            throw Failure(error)
        }
    }

    /// SQLite's `SQLITE_TRANSIENT`: copy the bytes now. The C macro is a cast of -1 that Swift
    /// does not import.
    static var transient: sqlite3_destructor_type { unsafeBitCast(-1, to: sqlite3_destructor_type.self) }

    private func check(_ result: Int32, binding index: Int32) throws(SQLiteError) {
        guard result == SQLITE_OK else {
            throw .bind(path: path, sql: sql, index: index, code: result, message: Self.message(of: handle))
        }
    }

    private static func message(of statement: OpaquePointer) -> String {
        guard let connection = sqlite3_db_handle(statement), let text = sqlite3_errmsg(connection) else { return "" }
        return String(cString: text)
    }
}
