import CSQLite

/// A failed SQLite call: which database, what was being done, and what SQLite said.
///
/// Every case carries the database's path and SQLite's result code (extended codes are on, so
/// `SQLITE_IOERR_FSYNC` rather than `SQLITE_IOERR`) and message, so a log line names the file and
/// the cause without a second look.
public enum SQLiteError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The database could not be opened (`sqlite3_open_v2`).
    case open(path: String, code: Int32, message: String)
    /// A statement could not be compiled (`sqlite3_prepare_v3`).
    case prepare(path: String, sql: String, code: Int32, message: String)
    /// A value could not be bound to parameter `index` (1-based) of a statement.
    case bind(path: String, sql: String, index: Int32, code: Int32, message: String)
    /// Running a statement failed (`sqlite3_step`, or `sqlite3_exec` for `execute`).
    case step(path: String, sql: String, code: Int32, message: String)
    /// The database was used after `close()`.
    case closed(path: String)

    /// The database file the failure concerns.
    public var path: String {
        switch self {
        case .open(let path, _, _), .prepare(let path, _, _, _), .bind(let path, _, _, _, _),
            .step(let path, _, _, _), .closed(let path):
            path
        }
    }

    /// What was being done, as a phrase after "cannot": "open it", "prepare `SELECT …`".
    public var operation: String {
        switch self {
        case .open: "open it"
        case .prepare(_, let sql, _, _): "prepare `\(Self.brief(sql))`"
        case .bind(_, let sql, let index, _, _): "bind parameter \(index) of `\(Self.brief(sql))`"
        case .step(_, let sql, _, _): "run `\(Self.brief(sql))`"
        case .closed: "use it after it was closed"
        }
    }

    /// SQLite's (extended) result code; `SQLITE_MISUSE` for `closed`.
    public var code: Int32 {
        switch self {
        case .open(_, let code, _), .prepare(_, _, let code, _), .bind(_, _, _, let code, _), .step(_, _, let code, _):
            code
        case .closed: SQLITE_MISUSE
        }
    }

    /// SQLite's own explanation (`sqlite3_errmsg`).
    public var message: String {
        switch self {
        case .open(_, _, let message), .prepare(_, _, _, let message), .bind(_, _, _, _, let message),
            .step(_, _, _, let message):
            message
        case .closed: "the connection is closed"
        }
    }

    /// Whether SQLite found the file is not a database, or a damaged one (`SQLITE_NOTADB`,
    /// `SQLITE_CORRUPT` and their extended codes): no retry can help, only a new file.
    public var isCorruption: Bool {
        let primary = code & 0xFF
        return primary == SQLITE_CORRUPT || primary == SQLITE_NOTADB
    }

    public var description: String {
        "database \(path): cannot \(operation): \(message) (code \(code))"
    }

    /// The statement on one line, cut to a length a log line can carry.
    static func brief(_ sql: String) -> String {
        let line = sql.split(whereSeparator: { $0 == "\n" || $0 == " " }).joined(separator: " ")
        return line.count <= 80 ? line : String(line.prefix(79)) + "…"
    }
}
