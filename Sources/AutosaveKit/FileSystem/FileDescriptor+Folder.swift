import CAutosaveShims
import Glibc
import SystemPackage

/// The calls on a folder's descriptor that swift-system does not offer: a file named in the folder
/// is opened, renamed or removed there, whatever has been renamed over the folder's path since it
/// was opened (the `PathResolver`'s discipline). Each throws the call's `Errno` and retries `EINTR`
/// through `SystemCall`; the caller adds the path it concerns.
extension FileDescriptor {
    /// The current working directory, as a folder descriptor (`AT_FDCWD`): a name given to it
    /// resolves as a plain path does, an absolute one included. Never closed.
    static var currentDirectory: FileDescriptor { FileDescriptor(rawValue: AT_FDCWD) }

    /// Opens `name` in this folder.
    ///
    /// - Parameter permissions: the mode of a file `.create` makes (required with it).
    /// - Throws: `Errno` from `openat` (`EEXIST` with `.exclusiveCreate`, `ELOOP` for a symbolic
    ///   link under `.noFollow`, …).
    /// The corresponding C function is `openat`.
    func open(
        _ name: String, _ mode: AccessMode, options: OpenOptions = [], permissions: FilePermissions? = nil
    ) throws(Errno) -> FileDescriptor {
        let flags = mode.rawValue | options.rawValue
        let descriptor = try SystemCall.value { openat(rawValue, name, flags, permissions?.rawValue ?? 0) }
        return FileDescriptor(rawValue: descriptor)
    }

    /// Removes the name `name` from this folder (not a folder's name).
    ///
    /// - Throws: `Errno` from `unlinkat` (`ENOENT` when it is gone already).
    /// The corresponding C function is `unlinkat`.
    func removeEntry(_ name: String) throws(Errno) {
        try SystemCall.check { unlinkat(rawValue, name, 0) }
    }

    /// Whether this folder has an entry `name` (a symbolic link counts when its target exists).
    ///
    /// The corresponding C function is `faccessat` with `F_OK`.
    func hasEntry(_ name: String) -> Bool {
        (try? SystemCall.check { faccessat(rawValue, name, F_OK, 0) }) != nil
    }

    /// How `rename` treats a file already at the new name.
    enum RenameMode {
        /// It is replaced (and destroyed, unless another name links it).
        case replacing
        /// The two names are swapped atomically: neither file is destroyed (`RENAME_EXCHANGE`).
        case exchanging
        /// The rename fails with `EEXIST` (`RENAME_NOREPLACE`).
        case failingIfTaken
    }

    /// Renames `name` to `newName`, both in this folder.
    ///
    /// - Throws: `Errno` from the rename: `EEXIST` under `.failingIfTaken`, `EINVAL`, `ENOSYS` or
    ///   `EOPNOTSUPP` where the file system cannot exchange or refuse, `ENOENT`, `EXDEV`, ….
    /// The corresponding C functions are `renameat` and `renameat2`.
    func rename(_ name: String, to newName: String, _ mode: RenameMode = .replacing) throws(Errno) {
        switch mode {
        case .replacing: try SystemCall.check { renameat(rawValue, name, rawValue, newName) }
        case .exchanging: try SystemCall.check { CAutosaveShims_renameExchange(rawValue, name, rawValue, newName) }
        case .failingIfTaken: try SystemCall.check { CAutosaveShims_renameNoReplace(rawValue, name, rawValue, newName) }
        }
    }
}

extension FileDescriptor {
    /// Gives the open file the owner `user` and group `group`.
    ///
    /// - Throws: `Errno` from `fchown` (`EPERM` for an owner this process may not give).
    /// The corresponding C function is `fchown`.
    func changeOwner(user: uid_t, group: gid_t) throws(Errno) {
        try SystemCall.check { fchown(rawValue, user, group) }
    }

    /// Sets the open file's mode bits (permissions, setuid, setgid, sticky).
    ///
    /// - Throws: `Errno` from `fchmod`.
    /// The corresponding C function is `fchmod`.
    func changeMode(_ mode: mode_t) throws(Errno) {
        try SystemCall.check { fchmod(rawValue, mode) }
    }

    /// Writes every byte of `bytes` at `offset`, resuming after short writes, leaving the
    /// descriptor's own offset where it was.
    ///
    /// - Throws: `Errno` from `pwrite`; part of `bytes` may have been written.
    /// The corresponding C function is `pwrite`.
    func writeAll(_ bytes: [UInt8], atOffset offset: Int64) throws(Errno) {
        do { try writeAll(toAbsoluteOffset: offset, bytes) } catch { throw error as? Errno ?? .ioError }
    }

    /// Cuts or extends the open file to `size` bytes.
    ///
    /// - Throws: `Errno` from `ftruncate`.
    /// The corresponding C function is `ftruncate`.
    func truncate(to size: Int) throws(Errno) {
        do { try resize(to: Int64(size)) } catch { throw error as? Errno ?? .ioError }
    }
}
