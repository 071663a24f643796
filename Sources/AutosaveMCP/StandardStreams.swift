import FoundationEssentials
import Glibc

/// Standard input as lines and standard output as a place for lines: MCP's stdio transport.
///
/// A thread of its own blocks reading standard input, so nothing runs while nothing comes; the
/// lines (without their line break) arrive in order and the stream ends with the input.
enum StandardStreams {
    /// The non-empty lines of `input`, until it ends.
    static func lines(of input: CInt = STDIN_FILENO) -> AsyncStream<[UInt8]> {
        let (lines, continuation) = AsyncStream.makeStream(of: [UInt8].self)
        startThread {
            var pending: [UInt8] = []
            var chunk = [UInt8](repeating: 0, count: 64 * 1024)
            while true {
                let count = chunk.withUnsafeMutableBytes { read(input, $0.baseAddress, $0.count) }
                if count < 0, errno == EINTR { continue }
                if count <= 0 { break }
                pending.append(contentsOf: chunk[0..<count])
                var start = 0
                while let newline = pending[start...].firstIndex(of: UInt8(ascii: "\n")) {
                    var end = newline
                    if end > start, pending[end - 1] == UInt8(ascii: "\r") { end -= 1 }
                    if end > start { continuation.yield(Array(pending[start..<end])) }
                    start = newline + 1
                }
                pending.removeFirst(start)
            }
            continuation.finish()
        }
        return lines
    }

    /// Runs `body` on a detached thread of its own (Foundation's `Thread` would bring
    /// CoreFoundation into the binary); where no thread can be made, on the task pool.
    private static func startThread(_ body: @escaping @Sendable () -> Void) {
        final class Work: Sendable {
            let body: @Sendable () -> Void
            init(_ body: @escaping @Sendable () -> Void) { self.body = body }
        }
        let work = Unmanaged.passRetained(Work(body)).toOpaque()
        var thread = pthread_t()
        let created = pthread_create(&thread, nil, { argument in
            Unmanaged<Work>.fromOpaque(argument!).takeRetainedValue().body()
            return nil
        }, work)
        if created == 0 {
            pthread_detach(thread)
        } else {
            let work = Unmanaged<Work>.fromOpaque(work).takeRetainedValue()
            // Owned by no one, like the thread it stands in for; never cancelled: it ends with the input.
            Task.detached { work.body() }
        }
    }

    /// Writes `line` and a line break to `output`, all of it; false when it cannot (the reader went).
    @discardableResult
    static func write(line: String, to output: CInt = STDOUT_FILENO) -> Bool {
        var bytes = Array(line.utf8)
        bytes.append(UInt8(ascii: "\n"))
        var written = 0
        while written < bytes.count {
            let count = bytes[written...].withUnsafeBytes { Glibc.write(output, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            if count <= 0 { return false }
            written += count
        }
        return true
    }
}
