import Glibc
import NIOCore
import SystemPackage

/// Content a client sends raw after a request's line, held where the socket's write takes it
/// from: read from a file or standard input straight into that buffer, never copied on the way.
public struct RequestContent: Sendable {
    var buffer: ByteBuffer

    /// How many bytes it holds (the request's `contentBytes`).
    public var count: Int { buffer.readableBytes }

    /// Bytes already in memory (one copy).
    public init(_ bytes: [UInt8]) {
        buffer = ByteBuffer(bytes: bytes)
    }

    private init(buffer: ByteBuffer) {
        self.buffer = buffer
    }

    /// Reads every byte of the file at `path`.
    ///
    /// - Throws: `Errno` from `open` or `read` (`ENOENT`, `EACCES`, `EISDIR`, …).
    public static func read(path: String) throws(Errno) -> RequestContent {
        let file: SystemPackage.FileDescriptor
        do { file = try SystemPackage.FileDescriptor.open(FilePath(path), .readOnly, options: [.closeOnExec]) } catch {
            throw error as? Errno ?? .ioError
        }
        defer { try? file.close() }
        return try read(file)
    }

    /// Reads standard input to its end.
    ///
    /// - Throws: `Errno` from `read`.
    public static func readStandardInput() throws(Errno) -> RequestContent {
        try read(.standardInput)
    }

    private static func read(_ file: SystemPackage.FileDescriptor) throws(Errno) -> RequestContent {
        var status = stat()
        let size = fstat(file.rawValue, &status) == 0 && status.st_mode & S_IFMT == S_IFREG ? Int(status.st_size) : 0
        // A file is read in one piece into a buffer of its size; a pipe in 1 MiB steps.
        var buffer = ByteBuffer()
        buffer.reserveCapacity(max(size + 1, 1 << 16))
        buffer.withUnsafeMutableWritableBytes { LargeMemory.adviseHugePages($0) }
        while true {
            let count: Int
            do {
                // The room left, if any: the end of a file that was read whole is seen with one byte.
                count = try buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: buffer.writableBytes > 0 ? 1 : 1 << 20) {
                    try file.read(into: $0, retryOnInterrupt: true)
                }
            } catch {
                throw error as? Errno ?? .ioError
            }
            if count == 0 { return RequestContent(buffer: buffer) }
        }
    }
}
