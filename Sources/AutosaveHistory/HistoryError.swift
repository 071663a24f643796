import Glibc

/// Why the history store could not do what was asked, in words a log line can carry as they are.
///
/// `corrupt` is the one a caller acts on: the file is not a usable history database, and no retry
/// will make it one, so the caller sets it aside and starts a new one. Everything else is a failure
/// of this attempt (a full disk, a permission, a busy lock) that leaves the database as it was.
public enum HistoryError: Error, CustomStringConvertible, Equatable, Sendable {
    /// The file at `path` is not a usable history database: truncated, garbage, failing SQLite's
    /// `PRAGMA quick_check`, another program's database, a schema version this code does not know,
    /// or a stored content that no longer decodes to what was recorded.
    case corrupt(path: String, detail: String)
    /// SQLite failed at `operation` ("prepare `SELECT …`") with its result `code` and `message`.
    case sqlite(path: String, operation: String, code: Int32, message: String)
    /// zstd failed to compress, or to decompress, a content.
    case compression(detail: String)
    /// A system call on a file of the database failed with `errno`.
    case system(path: String, operation: String, errno: Int32)

    public var description: String {
        switch self {
        case .corrupt(let path, let detail):
            "history database \(path) is not usable: \(detail); it is set aside and a new one started"
        case .sqlite(let path, let operation, let code, let message):
            "history database \(path): cannot \(operation): \(message) (code \(code))"
        case .compression(let detail):
            "history compression failed: \(detail)"
        case .system(let path, let operation, let errno):
            "history database \(path): cannot \(operation): \(String(cString: strerror(errno))) (errno \(errno))"
        }
    }
}

extension HistoryError: SQLiteErrorConvertible {
    /// SQLite's failure as a history error: `corrupt` when SQLite found the file damaged or not a
    /// database at all, `sqlite` otherwise.
    public init(_ error: SQLiteError) {
        if error.isCorruption {
            self = .corrupt(
                path: error.path,
                detail: "SQLite: \(error.message) (code \(error.code)) while it tried to \(error.operation)")
        } else {
            self = .sqlite(path: error.path, operation: error.operation, code: error.code, message: error.message)
        }
    }
}
