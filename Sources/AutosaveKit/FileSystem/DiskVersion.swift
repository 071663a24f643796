import Glibc
import SystemPackage

/// One version of a file as read from disk: its bytes and the fingerprint they belong to.
public struct DiskVersion: Sendable, Equatable {
    public var bytes: [UInt8]
    public var fingerprint: Fingerprint

    public init(bytes: [UInt8], fingerprint: Fingerprint) {
        self.bytes = bytes
        self.fingerprint = fingerprint
    }

    /// Why a file could not be read.
    public enum ReadError: Error, Equatable, Sendable, CustomStringConvertible {
        case tooLarge(path: String, size: Int64, limit: Int)
        case notARegularFile(path: String)
        case system(path: String, Errno)

        public var description: String {
            switch self {
            case .tooLarge(let path, let size, let limit):
                "\(path) is \(size) bytes, more than limits.maxFileBytes (\(limit)); it cannot be opened"
            case .notARegularFile(let path): "\(path) is not a regular file; it cannot be opened"
            case .system(let path, let errno): "cannot read \(path): \(errno.description)"
            }
        }
    }

    /// Reads `absolutePath` (following symlinks); nil when no file is there.
    ///
    /// The fingerprint is taken from the open descriptor before and after reading; a file that
    /// changes while it is read is read again, so bytes and fingerprint always belong together.
    /// - Throws: `ReadError` for a file over `limit` bytes, a directory, or an I/O error.
    public static func read(_ absolutePath: String, displayPath: String, limit: Int) throws(ReadError) -> DiskVersion? {
        for _ in 0..<8 {
            let fd = open(absolutePath, O_RDONLY | O_CLOEXEC)
            guard fd >= 0 else {
                let code = Errno(rawValue: Glibc.errno)
                if code == .noSuchFileOrDirectory { return nil }
                throw .system(path: displayPath, code)
            }
            defer { close(fd) }
            guard let before = Fingerprint.of(descriptor: fd) else { throw .system(path: displayPath, Errno(rawValue: Glibc.errno)) }
            guard before.isRegularFile else { throw .notARegularFile(path: displayPath) }
            guard before.size <= Int64(limit) else { throw .tooLarge(path: displayPath, size: before.size, limit: limit) }
            var bytes: [UInt8] = []
            bytes.reserveCapacity(Int(before.size))
            var chunk = [UInt8](repeating: 0, count: 64 << 10)
            while true {
                let count = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
                if count < 0 {
                    if Glibc.errno == EINTR { continue }
                    throw .system(path: displayPath, Errno(rawValue: Glibc.errno))
                }
                if count == 0 { break }
                bytes.append(contentsOf: chunk[..<count])
                if bytes.count > limit { throw .tooLarge(path: displayPath, size: Int64(bytes.count), limit: limit) }
            }
            guard let after = Fingerprint.of(descriptor: fd) else { throw .system(path: displayPath, Errno(rawValue: Glibc.errno)) }
            if after == before && after.size == Int64(bytes.count) {
                return DiskVersion(bytes: bytes, fingerprint: after)
            }
        }
        throw .system(path: displayPath, .resourceTemporarilyUnavailable)
    }
}
