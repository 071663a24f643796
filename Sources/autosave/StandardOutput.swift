import Glibc

/// Standard output for commands whose output is often piped (`autosave cat f | head -1`,
/// `autosave events | head -2`).
///
/// When the reader goes away, the command ends quietly with status 0, as a filter's writer
/// should: Foundation's `FileHandle.write(_:)` stopped the process with a `try!` and a backtrace.
enum StandardOutput {
    /// Writes all of `bytes`, or exits 0 if the reader has closed the pipe.
    static func write(_ bytes: [UInt8]) {
        fflush(nil)
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { Glibc.write(STDOUT_FILENO, $0.baseAddress! + offset, $0.count - offset) }
            if written < 0 {
                if errno == EINTR { continue }
                if errno == EPIPE { exit(0) }
                return
            }
            offset += written
        }
    }
}
