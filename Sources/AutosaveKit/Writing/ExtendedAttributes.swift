import CAutosaveShims
import Glibc
import SystemPackage

/// A file's extended attributes — `user.*` tags, its access ACL (`system.posix_acl_access`),
/// security labels — read from the version a save replaces and given to the new one, so that a
/// save changes the bytes and nothing else.
///
/// Copying is all or nothing: when one attribute cannot be read or set (a `trusted.*` attribute
/// without the privilege, say), the caller writes the file in place instead, which keeps them all.
struct ExtendedAttributes {
    /// Names as the kernel gave them (NUL-terminated bytes, not necessarily UTF-8), and values.
    private(set) var entries: [(name: [CChar], value: [UInt8])] = []

    var isEmpty: Bool { entries.isEmpty }

    /// Every attribute of the file at `path` (an absolute path whose symlinks are resolved).
    ///
    /// - Throws: the `Errno` of the first list or read that fails; a file system without extended
    ///   attributes gives an empty set, not an error.
    static func read(_ path: String) throws(Errno) -> ExtendedAttributes {
        var attributes = ExtendedAttributes()
        for name in try names(path) {
            attributes.entries.append((name, try value(of: name, at: path)))
        }
        return attributes
    }

    /// Sets every attribute on the open file `fd`.
    ///
    /// - Throws: the name of the attribute that could not be set, with its `Errno`.
    func apply(to fd: CInt) throws(Failure) {
        for (name, value) in entries {
            let result = value.withUnsafeBytes { CAutosaveShims_setAttribute(fd, name, $0.baseAddress, $0.count) }
            if result != 0 { throw Failure(name: Self.shown(name), errno: Errno(rawValue: errno)) }
        }
    }

    /// One attribute that could not be given to the new version.
    struct Failure: Error {
        var name: String
        var errno: Errno
    }

    // The list and each value can grow between the call that sizes them and the call that reads
    // them (ERANGE): ask again.
    private static func shown(_ name: [CChar]) -> String {
        String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    private static func names(_ path: String) throws(Errno) -> [[CChar]] {
        while true {
            let size = CAutosaveShims_listAttributes(path, nil, 0)
            if size < 0 { if Errno(rawValue: errno) == .notSupported { return [] } else { throw Errno(rawValue: errno) } }
            if size == 0 { return [] }
            var buffer = [CChar](repeating: 0, count: size)
            let read = CAutosaveShims_listAttributes(path, &buffer, size)
            if read < 0 {
                if Errno(rawValue: errno) == .outOfRange { continue }
                throw Errno(rawValue: errno)
            }
            return buffer[..<read].split(separator: 0).map { Array($0) + [0] }
        }
    }

    private static func value(of name: [CChar], at path: String) throws(Errno) -> [UInt8] {
        while true {
            let size = CAutosaveShims_getAttribute(path, name, nil, 0)
            if size < 0 { throw Errno(rawValue: errno) }
            var buffer = [UInt8](repeating: 0, count: size)
            let read = buffer.withUnsafeMutableBytes { CAutosaveShims_getAttribute(path, name, $0.baseAddress, size) }
            if read < 0 {
                if Errno(rawValue: errno) == .outOfRange { continue }
                throw Errno(rawValue: errno)
            }
            return Array(buffer[..<read])
        }
    }
}
