import CAutosaveShims
import Glibc
import SystemPackage

/// The extended attributes a save carries from the version it replaces to the new one: `user.*`
/// (tags that people and tools put on a file) and the access ACL (`system.posix_acl_access`).
///
/// Others are left to the kernel and its policy, on purpose: `security.capability` must not
/// outlive a change of content (the kernel drops it on every write), `security.ima` and
/// `security.evm` belong to the old content and inode, a `security.selinux` label is given by
/// policy when the file is created, and `trusted.*` is administrators' business (and hidden from
/// an unprivileged agent). Attributes the new file was born with (a default ACL's) are kept.
struct ExtendedAttributes {
    /// Names as the kernel gave them (NUL-terminated bytes, not necessarily UTF-8), and values.
    private(set) var entries: [(name: [CChar], value: [UInt8])] = []

    var isEmpty: Bool { entries.isEmpty }

    /// Whether a save carries the attribute `name` (NUL-terminated) over.
    static func isCarried(_ name: [CChar]) -> Bool {
        let bytes = name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
        return bytes.starts(with: Array("user.".utf8)) || bytes == Array("system.posix_acl_access".utf8)
    }

    /// The carried attributes of the file at `path` (its final component not followed).
    ///
    /// - Throws: the `Errno` of the first list or read that fails; a file system without extended
    ///   attributes gives an empty set, and an attribute removed meanwhile is skipped.
    static func read(_ path: String) throws(Errno) -> ExtendedAttributes {
        var attributes = ExtendedAttributes()
        for name in try names(path) where isCarried(name) {
            if let value = try value(of: name, at: path) { attributes.entries.append((name, value)) }
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

    private static func shown(_ name: [CChar]) -> String {
        String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    // A list or a value can grow between the call that sizes it and the call that reads it:
    // the second call then fails with ERANGE (or, when the first saw nothing, returns more than
    // the empty buffer holds), and both are asked again.
    private static func names(_ path: String) throws(Errno) -> [[CChar]] {
        while true {
            let size = CAutosaveShims_listAttributes(path, nil, 0)
            if size < 0 {
                if Errno(rawValue: errno) == .notSupported { return [] }
                throw Errno(rawValue: errno)
            }
            if size == 0 { return [] }
            var buffer = [CChar](repeating: 0, count: size)
            let read = CAutosaveShims_listAttributes(path, &buffer, size)
            if read < 0 {
                if Errno(rawValue: errno) == .outOfRange { continue }
                throw Errno(rawValue: errno)
            }
            if read > size { continue }
            return buffer[..<read].split(separator: 0).map { Array($0) + [0] }
        }
    }

    /// One value; nil when the attribute is gone.
    private static func value(of name: [CChar], at path: String) throws(Errno) -> [UInt8]? {
        while true {
            let size = CAutosaveShims_getAttribute(path, name, nil, 0)
            if size < 0 {
                if Errno(rawValue: errno) == .noData { return nil }
                throw Errno(rawValue: errno)
            }
            var buffer = [UInt8](repeating: 0, count: size)
            let read = buffer.withUnsafeMutableBytes { CAutosaveShims_getAttribute(path, name, $0.baseAddress, size) }
            if read < 0 {
                switch Errno(rawValue: errno) {
                case .outOfRange: continue
                case .noData: return nil
                default: throw Errno(rawValue: errno)
                }
            }
            if read > size { continue }
            return Array(buffer[..<read])
        }
    }
}
