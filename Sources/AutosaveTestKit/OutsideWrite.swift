import Foundation

/// What a tool may do to a file while the agent is down, done as the tool does it: in the file's
/// own inode (`echo x >>`, nano or VS Code rewriting it, a truncation), with a new inode renamed
/// over it (`sed -i`, `git checkout`), or removing it; or nothing at all.
public enum OutsideWrite: String, CaseIterable, Sendable, CustomStringConvertible {
    case append
    case rewriteInPlace
    case truncate
    case replace
    case remove
    case nothing

    /// Its name, as a test's arguments show it.
    public var description: String { rawValue }

    /// Whether the file's own inode is written (what a hard link to it would see).
    public var isInPlace: Bool { self == .append || self == .rewriteInPlace || self == .truncate }

    /// Does it to the file at `path`.
    ///
    /// - Throws: `POSIXError` when the file cannot be opened, written, renamed or removed.
    public func apply(to path: String) throws {
        switch self {
        case .append:
            try Self.write(path, flags: O_APPEND, "a line appended while the agent was down\n")
        case .rewriteInPlace:
            try Self.write(path, flags: O_TRUNC, "rewritten in place while the agent was down\n")
        case .truncate:
            try Self.check(Foundation.truncate(path, 0))
        case .replace:
            try TemporaryDirectory.writeFile(path + ".replacing", Array("replaced while the agent was down\n".utf8))
            try Self.check(rename(path + ".replacing", path))
        case .remove:
            try Self.check(unlink(path))
        case .nothing:
            break
        }
    }

    private static func write(_ path: String, flags: Int32, _ text: String) throws {
        let descriptor = open(path, O_WRONLY | O_CLOEXEC | flags)
        try check(descriptor)
        defer { close(descriptor) }
        let bytes = Array(text.utf8)
        try check(bytes.withUnsafeBytes { Int32(Foundation.write(descriptor, $0.baseAddress, $0.count)) })
    }

    private static func check(_ result: Int32) throws {
        guard result >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
    }
}
