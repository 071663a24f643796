import CAutosaveShims
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
        /// The path leads where no client may read (out of the root, into `.git/` or the state
        /// directory), through a link that is there or was swapped in.
        case refused(PathRefusal)
        case system(path: String, Errno)

        public var description: String {
            switch self {
            case .tooLarge(let path, let size, let limit):
                "\(path) is \(size) bytes, more than limits.maxFileBytes (\(limit)); it cannot be opened"
            case .notARegularFile(let path): "\(path) is not a regular file; it cannot be opened"
            case .refused(let refusal): "\(refusal); it is not read"
            case .system(let path, let errno): "cannot read \(path): \(errno.description)"
            }
        }
    }

    /// Reads the file at `path` as `resolver` finds it (a link followed only while it stays in
    /// bounds); nil when no file is there.
    ///
    /// Only a regular file is opened: a FIFO, socket or device is refused without being opened
    /// (opening a FIFO waits for a writer). The fingerprint is taken from the open descriptor
    /// before and after reading; a file that changes while it is read is read again, so bytes
    /// and fingerprint always belong together.
    /// - Throws: `ReadError.refused` when the path leads out of bounds, `.tooLarge` for a file
    ///   over `limit` bytes, `.notARegularFile`, or an I/O error.
    public static func read(_ path: String, resolver: PathResolver, limit: Int) throws(ReadError) -> DiskVersion? {
        for _ in 0..<8 {
            let location: Location
            do {
                let resolution = try resolver.resolve(path)
                guard let found = resolution.location else { return nil }
                location = found
            } catch {
                if let errno = error.errno { throw .system(path: path, errno) }
                throw .refused(error)
            }
            let handle = openat(location.folder, location.name, O_PATH | O_NOFOLLOW | O_CLOEXEC)
            guard handle >= 0 else {
                let code = Errno(rawValue: Glibc.errno)
                if code == .noSuchFileOrDirectory { return nil }
                throw .system(path: path, code)
            }
            defer { close(handle) }
            guard let kind = Fingerprint.of(descriptor: handle) else { throw .system(path: path, Errno(rawValue: Glibc.errno)) }
            // A link swapped in since the walk: resolve again (and follow it only if it stays inside).
            if kind.isSymbolicLink { continue }
            guard kind.isRegularFile else { throw .notARegularFile(path: path) }
            // Opened again through the handle itself: the same inode, whatever took the name since.
            var fd = open("/proc/self/fd/\(handle)", O_RDONLY | O_CLOEXEC)
            if fd < 0, Glibc.errno == ENOENT {
                fd = openat(location.folder, location.name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC)
            }
            guard fd >= 0 else { throw .system(path: path, Errno(rawValue: Glibc.errno)) }
            defer { close(fd) }
            if let version = try read(fd, path: path, limit: limit) { return version }
        }
        throw .system(path: path, .resourceTemporarilyUnavailable)
    }

    /// Reads an open file whole; nil when it changed while it was read (read it again).
    private static func read(_ fd: CInt, path displayPath: String, limit: Int) throws(ReadError) -> DiskVersion? {
        guard let before = Fingerprint.of(descriptor: fd) else { throw .system(path: displayPath, Errno(rawValue: Glibc.errno)) }
        guard before.isRegularFile else { throw .notARegularFile(path: displayPath) }
        guard before.size <= Int64(limit) else { throw .tooLarge(path: displayPath, size: before.size, limit: limit) }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(Int(before.size))
        var chunk = [UInt8](repeating: 0, count: 64 << 10)
        while true {
            let count: Int
            do { count = try chunk.withUnsafeMutableBytes { try FileDescriptor(rawValue: fd).read(into: $0) } } catch {
                throw .system(path: displayPath, error as? Errno ?? .ioError)
            }
            if count == 0 { break }
            bytes.append(contentsOf: chunk[..<count])
            if bytes.count > limit { throw .tooLarge(path: displayPath, size: Int64(bytes.count), limit: limit) }
        }
        guard let after = Fingerprint.of(descriptor: fd) else { throw .system(path: displayPath, Errno(rawValue: Glibc.errno)) }
        if after == before && after.size == Int64(bytes.count) {
            return DiskVersion(bytes: bytes, fingerprint: after)
        }
        return nil
    }
}
