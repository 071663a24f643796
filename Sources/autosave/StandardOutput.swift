import Glibc

/// Standard output for commands whose output is often piped (`autosave cat f | head -1`,
/// `autosave events | head -2`).
///
/// When the reader goes away, the command ends quietly with status 0, as a filter's writer
/// should: Foundation's `FileHandle.write(_:)` stopped the process with a `try!` and a backtrace.
enum StandardOutput {
    /// Writes all of `bytes`, or exits 0 if the reader has closed the pipe.
    static func write(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { write($0) }
    }

    /// Writes all of `bytes`, or exits 0 if the reader has closed the pipe.
    static func write(_ bytes: UnsafeRawBufferPointer) {
        _ = ignoresBrokenPipe
        fflush(nil)
        guard let base = bytes.baseAddress else { return }
        var offset = 0
        while offset < bytes.count {
            let written = Glibc.write(STDOUT_FILENO, base + offset, bytes.count - offset)
            if written < 0 {
                if errno == EINTR { continue }
                if errno == EPIPE { exit(0) }
                return
            }
            offset += written
        }
    }

    /// SIGPIPE ignored, once, before the first write: a reader gone away is then EPIPE here,
    /// which ends the command with 0. NIO ignores it when it starts, but `show` does not start NIO.
    private static let ignoresBrokenPipe: Void = { _ = signal(SIGPIPE, SIG_IGN) }()
}
