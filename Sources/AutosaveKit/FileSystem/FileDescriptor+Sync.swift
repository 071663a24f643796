import Glibc
import SystemPackage

extension FileDescriptor {
    /// Flushes the file's data and metadata to the device.
    ///
    /// - Throws: `Errno` from `fsync` (`EIO` means the data may be lost: rewrite it, never retry).
    /// The corresponding C function is `fsync`.
    func sync() throws(Errno) {
        guard Glibc.fsync(rawValue) == 0 else { throw Errno(rawValue: errno) }
    }
}
