import Foundation
import Glibc
import Logging
import MCP

/// MCP's stdio transport, one JSON-RPC message per line, that costs nothing while nothing comes.
///
/// A thread of its own blocks reading standard input (the SDK's transport makes it non-blocking
/// and wakes every 10 ms to look); the messages go out on standard output, which carries nothing
/// else. The stream of messages ends when standard input does.
public actor StandardIOLines: Transport {
    public nonisolated let logger: Logger
    private let input: CInt
    private let output: CInt
    private let messages: AsyncThrowingStream<Data, any Swift.Error>
    private let continuation: AsyncThrowingStream<Data, any Swift.Error>.Continuation
    private var isReading = false

    /// A transport on `input` and `output` (standard input and output unless told otherwise).
    public init(input: CInt = STDIN_FILENO, output: CInt = STDOUT_FILENO, logger: Logger) {
        self.input = input
        self.output = output
        self.logger = logger
        (messages, continuation) = AsyncThrowingStream.makeStream(of: Data.self, throwing: (any Swift.Error).self)
    }

    public func connect() async throws {
        guard !isReading else { return }
        isReading = true
        let input = self.input
        let continuation = self.continuation
        let thread = Thread { Self.readLines(from: input, into: continuation) }
        thread.name = "autosave-mcp-stdin"
        thread.start()
    }

    /// Reads until the end of `input`, handing over each non-empty line (without its line break).
    private static func readLines(from input: CInt, into continuation: AsyncThrowingStream<Data, any Swift.Error>.Continuation) {
        var pending: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(input, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                continuation.finish(throwing: MCPError.transportError(POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)))
                return
            }
            if count == 0 { break }
            pending.append(contentsOf: chunk[0..<count])
            var start = 0
            while let newline = pending[start...].firstIndex(of: UInt8(ascii: "\n")) {
                var end = newline
                if end > start, pending[end - 1] == UInt8(ascii: "\r") { end -= 1 }
                if end > start { continuation.yield(Data(pending[start..<end])) }
                start = newline + 1
            }
            pending.removeFirst(start)
        }
        continuation.finish()
    }

    public func disconnect() async {
        continuation.finish()
    }

    /// Writes `data` and a line break to standard output, all of it.
    public func send(_ data: Data) async throws {
        var bytes = [UInt8](data)
        bytes.append(UInt8(ascii: "\n"))
        var written = 0
        while written < bytes.count {
            let count = bytes[written...].withUnsafeBytes { Glibc.write(output, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw MCPError.transportError(POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO))
            }
            written += count
        }
    }

    public func receive() -> AsyncThrowingStream<Data, any Swift.Error> { messages }
}
