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
        let list: [UInt8]
        do {
            list = try sized { CAutosaveShims_listAttributes(path, $0?.assumingMemoryBound(to: CChar.self), $1) }
        } catch where error == .notSupported {
            return ExtendedAttributes()
        }
        var attributes = ExtendedAttributes()
        for name in list.split(separator: 0).map({ $0.map { CChar(bitPattern: $0) } + [0] }) where isCarried(name) {
            do {
                attributes.entries.append((name, try sized { CAutosaveShims_getAttribute(path, name, $0, $1) }))
            } catch where error == .noData {
                continue
            }
        }
        return attributes
    }

    /// Sets every attribute on the open file `fd`.
    ///
    /// - Throws: the `Errno` of the first attribute that could not be set.
    func apply(to file: FileDescriptor) throws(Errno) {
        for (name, value) in entries {
            try SystemCall.check { value.withUnsafeBytes { CAutosaveShims_setAttribute(file.rawValue, name, $0.baseAddress, $0.count) } }
        }
    }

    /// Calls `call(buffer, size)` once with no buffer to learn the size, then to fill one. A list
    /// or a value can grow between the two calls: the second then fails with ERANGE (or, when the
    /// first saw nothing, returns more than the empty buffer holds), and both are made again.
    private static func sized(_ call: (UnsafeMutableRawPointer?, Int) -> Int) throws(Errno) -> [UInt8] {
        while true {
            let size = try SystemCall.value { call(nil, 0) }
            var buffer = [UInt8](repeating: 0, count: size)
            let read: Int
            do throws(Errno) { read = try SystemCall.value { buffer.withUnsafeMutableBytes { call($0.baseAddress, size) } } } catch {
                if error == .outOfRange { continue }
                throw error
            }
            if read > size { continue }
            return Array(buffer[..<read])
        }
    }
}
