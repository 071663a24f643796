import Foundation
import Glibc

/// A real directory under the system's temp folder, removed when the value is released.
///
/// Tests use it instead of mocks: the watcher, the writer and the agent all run against it.
public final class TemporaryDirectory: Sendable {
    /// The directory's absolute, symlink-free path.
    public let path: String

    /// - Throws: when `mkdtemp` fails.
    public init(prefix: String = "autosave-test") throws {
        let template = (NSTemporaryDirectory() as NSString).appendingPathComponent("\(prefix)-XXXXXX")
        var bytes = Array(template.utf8CString)
        guard let made = mkdtemp(&bytes) else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: template])
        }
        guard let resolved = realpath(made, nil) else {
            throw CocoaError(.fileReadUnknown, userInfo: [NSFilePathErrorKey: template])
        }
        defer { free(resolved) }
        path = String(cString: resolved)
    }

    deinit {
        try? FileManager.default.removeItem(atPath: path)
    }

    /// The absolute path of `relative` inside the directory.
    public func url(_ relative: String) -> String { relative.isEmpty ? path : path + "/" + relative }

    /// Writes `content` to `relative` in place (open, truncate, write), creating parent directories.
    @discardableResult
    public func write(_ relative: String, _ content: String) throws -> String {
        let target = url(relative)
        try FileManager.default.createDirectory(
            atPath: (target as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try Self.writeFile(target, Array(content.utf8))
        return target
    }

    /// Writes `bytes` to the file at `path` in place (open, truncate, write, close), as a shell
    /// redirect does. The descriptor is close-on-exec: a process another test spawns meanwhile
    /// would otherwise keep it (Foundation's `Data.write` leaves it inheritable), and the agent
    /// would rightly see the file held open for writing for that process's whole life.
    public static func writeFile(_ path: String, _ bytes: [UInt8]) throws {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        defer { close(fd) }
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + offset, $0.count - offset) }
            guard written >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
            offset += written
        }
    }

    /// Reads `relative` as UTF-8.
    public func read(_ relative: String) throws -> String {
        try String(contentsOfFile: url(relative), encoding: .utf8)
    }

    /// Creates a directory (and its parents).
    public func makeDirectory(_ relative: String) throws {
        try FileManager.default.createDirectory(atPath: url(relative), withIntermediateDirectories: true)
    }

    /// Renames within (or out of) the directory with `rename(2)`.
    public func rename(_ from: String, _ to: String) throws {
        guard Foundation.rename(url(from), to.utf8.first == UInt8(ascii: "/") ? to : url(to)) == 0 else {
            throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
        }
    }

    /// Removes a file or a whole directory.
    public func remove(_ relative: String) throws {
        try FileManager.default.removeItem(atPath: url(relative))
    }

    /// Whether `relative` exists (without following a final symlink).
    public func exists(_ relative: String) -> Bool {
        var status = stat()
        return lstat(url(relative), &status) == 0
    }
}
