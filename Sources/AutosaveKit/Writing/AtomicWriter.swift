import CAutosaveShims
import Glibc
import SystemPackage

/// Saves a buffer to disk so that a reader sees the old file or the new one, never a mix, and a
/// crash loses neither — and never over an edit the buffer has not seen.
///
/// The recipe: resolve symlinks and refuse targets outside the root; write a
/// temp file `.<name>.autosave-<random>.tmp` beside the target (`O_EXCL|O_NOFOLLOW`, mode 0600);
/// restore the old owner, `user.*` attributes and access ACL, then mode (a change of owner clears
/// setuid and setgid); `fsync`; check that the file on disk is still the version the buffer was
/// based on (compare-and-swap); `renameat2` (`RENAME_EXCHANGE` over an existing file,
/// `RENAME_NOREPLACE` for a new one); `fsync` the directory; remove the displaced old version. A
/// file with several hard links is written in place under the `preserve` policy, and so is one
/// whose owner or attributes cannot be given to a new file.
public struct AtomicWriter: Sendable {
    public let root: String
    public let fsync: Bool
    public let hardLinks: HardLinkPolicy
    public let ownWrites: OwnWrites
    /// `0666 & ~umask`, the mode of a file created from nothing.
    let newFileMode: mode_t
    /// Where tests step in; none in the agent.
    let faults: FaultPoints

    /// A writer for files below `root`; `fsync` false skips the flushes (for tests and scratch
    /// trees: a crash may then lose the newest save), `hardLinks` says how a linked file is saved.
    public init(root: String, fsync: Bool = true, hardLinks: HardLinkPolicy = .preserve, ownWrites: OwnWrites = OwnWrites()) {
        self.init(root: root, fsync: fsync, hardLinks: hardLinks, ownWrites: ownWrites, faults: FaultPoints())
    }

    /// A writer whose saves pass through `faults`, for tests.
    @_spi(Testing) public init(
        root: String, fsync: Bool = true, hardLinks: HardLinkPolicy = .preserve, ownWrites: OwnWrites = OwnWrites(),
        faults: FaultPoints
    ) {
        self.faults = faults
        self.root = root
        self.fsync = fsync
        self.hardLinks = hardLinks
        self.ownWrites = ownWrites
        self.newFileMode = 0o666 & ~Self.processUmask()
    }

    /// Writes `bytes` to `path` (relative to the root) if the file there is still `expected`.
    ///
    /// - Parameter expected: the fingerprint the buffer's base was read with; nil when the buffer
    ///   believes the file does not exist.
    /// - Returns: the fingerprint of the file now on disk.
    /// - Throws: `WriteError.changedOnDisk` when the compare-and-swap fails (nothing written),
    ///   `.outsideRoot`, `.notARegularFile`, or `.system` with the errno; no temp file is left.
    public func write(_ bytes: [UInt8], to path: String, expecting expected: Fingerprint?) throws(WriteError) -> Fingerprint {
        let commit = try self.commit(bytes, to: path, expecting: expected)
        commit.displaced?.remove()
        return commit.fingerprint
    }

    /// What a save does about a file another process holds open for writing.
    public enum HeldOpen: Sendable {
        /// Write nothing and throw `WriteError.heldOpen`: the caller waits for the writer to close.
        case wait
        /// Write the file's own inode: an appending writer's later lines land after ours.
        case writeInPlace
    }

    /// `write`, except that the version the file had is left under the temp name for the caller
    /// to remove (`Commit.displaced`) once it has told the world the save is durable.
    ///
    /// A file another process holds open for writing is never replaced: the writer's later writes
    /// would go to the replaced inode and be deleted with it. `heldOpen` says what happens then.
    ///
    /// - Throws: as `write`, and `.heldOpen` when the file is held open and `heldOpen` is `.wait`.
    public func commit(
        _ bytes: [UInt8], to path: String, expecting expected: Fingerprint?, heldOpen: HeldOpen = .writeInPlace
    ) throws(WriteError) -> Commit {
        let target = try resolve(path)
        let directory = open(target.directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard directory >= 0 else { throw .system(path: path, operation: "open directory", Errno(rawValue: errno)) }
        defer { close(directory) }
        let current = Fingerprint.of(target.name, in: directory)
        if let current, !current.isRegularFile { throw .notARegularFile(path: path) }
        // Asked before the compare: a writer half way through has changed the file, and what it
        // has written so far is not for the buffer to merge while it can still wait.
        let isHeld = current != nil && OpenWriters.isHeld(target.name, in: directory)
        if isHeld, heldOpen == .wait { throw .heldOpen(path: path) }
        guard current == expected else { throw .changedOnDisk(path: path) }
        if let current, current.links > 1, hardLinks == .preserve {
            return Commit(
                fingerprint: try writeInPlace(bytes, path: path, target: target, directory: directory, expected: current),
                displaced: nil, inPlace: .hardLinks)
        }
        if let current, isHeld {
            return Commit(
                fingerprint: try writeInPlace(bytes, path: path, target: target, directory: directory, expected: current),
                displaced: nil, inPlace: .openWriter)
        }
        return try replace(bytes, path: path, target: target, directory: directory, current: current)
    }

    /// Removes `path` if it is still `expected`, durably.
    ///
    /// - Throws: `WriteError.changedOnDisk` when it changed or vanished meanwhile, or `.system`.
    public func remove(_ path: String, expecting expected: Fingerprint) throws(WriteError) {
        let target = try resolve(path)
        let directory = open(target.directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard directory >= 0 else { throw .system(path: path, operation: "open directory", Errno(rawValue: errno)) }
        defer { close(directory) }
        guard Fingerprint.of(target.name, in: directory) == expected else { throw .changedOnDisk(path: path) }
        ownWrites.recordRemoval(target.displayPath)
        guard unlinkat(directory, target.name, 0) == 0 else {
            ownWrites.forget(target.displayPath)
            throw .system(path: path, operation: "unlink", Errno(rawValue: errno))
        }
        if fsync, Glibc.fsync(directory) != 0 { throw .system(path: path, operation: "fsync directory", Errno(rawValue: errno)) }
    }

    // MARK: - The two ways of writing

    private func replace(
        _ bytes: [UInt8], path: String, target: Target, directory: CInt, current: Fingerprint?
    ) throws(WriteError) -> Commit {
        let temp = faults.tempName?(target.name) ?? Self.tempName(for: target.name)
        let fd = openat(directory, temp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw .system(path: path, operation: "create temp file", Errno(rawValue: errno)) }
        var committed = false
        var isOpen = true
        defer {
            if isOpen { close(fd) }
            if !committed { unlinkat(directory, temp, 0) }
        }
        try writeAll(bytes, to: fd, path: path)
        if let current {
            // What cannot be kept by replacing the file is kept by writing it in place instead.
            func inPlace(_ reason: InPlaceReason) throws(WriteError) -> Commit {
                Commit(
                    fingerprint: try writeInPlace(bytes, path: path, target: target, directory: directory, expected: current),
                    displaced: nil, inPlace: reason)
            }
            // The owner first: changing it clears setuid and setgid, so the mode goes on after it.
            if current.owner != getuid() || current.group != getgid(), fchown(fd, current.owner, current.group) != 0 {
                return try inPlace(.owner)
            }
            // Tags and the access ACL go over too, all of them or none. They are read through the
            // directory already open, so a directory swapped for a symlink meanwhile cannot lend
            // the attributes of a file outside the root.
            let attributes: ExtendedAttributes
            do { attributes = try ExtendedAttributes.read("/proc/self/fd/\(directory)/\(target.name)") } catch {
                if Fingerprint.of(target.name, in: directory) == nil { throw .changedOnDisk(path: path) }
                return try inPlace(.attributes)
            }
            do { try attributes.apply(to: fd) } catch { return try inPlace(.attributes) }
        }
        // After the owner and the ACL: the mode is the original's, group bits and ACL mask alike.
        let mode = current.map { mode_t($0.mode) & 0o7777 } ?? newFileMode
        guard fchmod(fd, mode) == 0 else { throw .system(path: path, operation: "chmod temp file", Errno(rawValue: errno)) }
        if fsync, Glibc.fsync(fd) != 0 { throw .system(path: path, operation: "fsync", Errno(rawValue: errno)) }
        guard let written = Fingerprint.of(descriptor: fd) else { throw .system(path: path, operation: "stat temp file", Errno(rawValue: errno)) }
        // Closed before it takes the name: a file open for writing is one a writer may be half
        // way through, and the watcher would hold its change back until the close.
        close(fd)
        isOpen = false
        faults.beforeCommit?(path)
        ownWrites.record(target.displayPath, written)
        // Compare-and-swap: the last look at the target before it is replaced.
        guard Fingerprint.of(target.name, in: directory) == current else {
            ownWrites.forget(target.displayPath)
            throw .changedOnDisk(path: path)
        }
        // An existing file is swapped with the temp rather than renamed over: someone may replace
        // it between the check above and the rename, and a swap destroys no version.
        faults.beforeRename?(path)
        var isExchanged = false
        var renamed: CInt
        if current == nil {
            renamed = CAutosaveShims_renameNoReplace(directory, temp, directory, target.name)
        } else {
            renamed = CAutosaveShims_renameExchange(directory, temp, directory, target.name)
            isExchanged = renamed == 0
            if renamed != 0, [EINVAL, ENOSYS, EOPNOTSUPP].contains(errno) {
                // A filesystem without RENAME_EXCHANGE: the plain rename, with its tiny window.
                renamed = renameat(directory, temp, directory, target.name)
            }
        }
        guard renamed == 0 else {
            let code = Errno(rawValue: errno)
            ownWrites.forget(target.displayPath)
            if code == .fileExists { throw .changedOnDisk(path: path) }
            throw .system(path: path, operation: "rename", code)
        }
        if isExchanged, Fingerprint.of(temp, in: directory) != current {
            // The swap displaced a version written after the check: give it its name back and
            // let the buffer merge with it. Ours is still in the buffer.
            committed = true
            ownWrites.forget(target.displayPath)
            if CAutosaveShims_renameExchange(directory, temp, directory, target.name) == 0,
                Fingerprint.of(temp, in: directory) == written
            {
                unlinkat(directory, temp, 0)
            }
            // Otherwise the temp name holds someone's version: it is left in place, not deleted.
            throw .changedOnDisk(path: path)
        }
        committed = true
        // The old version under the temp name goes with the directory's descriptor to whoever
        // removes it; on a failed fsync it is removed right away (the release below).
        var displaced: DisplacedVersion?
        if isExchanged {
            let kept = dup(directory)
            if kept >= 0 { displaced = DisplacedVersion(directory: kept, name: temp) } else { unlinkat(directory, temp, 0) }
        }
        if fsync, Glibc.fsync(directory) != 0 { throw .system(path: path, operation: "fsync directory", Errno(rawValue: errno)) }
        return Commit(fingerprint: written, displaced: displaced)
    }

    /// Overwrites the file's own inode (several hard links, or an owner or extended attributes we
    /// cannot give a new file).
    private func writeInPlace(
        _ bytes: [UInt8], path: String, target: Target, directory: CInt, expected: Fingerprint
    ) throws(WriteError) -> Fingerprint {
        let fd = openat(directory, target.name, O_WRONLY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else { throw .system(path: path, operation: "open", Errno(rawValue: errno)) }
        defer { close(fd) }
        guard Fingerprint.of(descriptor: fd) == expected else { throw .changedOnDisk(path: path) }
        try writeAll(bytes, to: fd, path: path)
        guard ftruncate(fd, off_t(bytes.count)) == 0 else { throw .system(path: path, operation: "truncate", Errno(rawValue: errno)) }
        if fsync, Glibc.fsync(fd) != 0 { throw .system(path: path, operation: "fsync", Errno(rawValue: errno)) }
        guard let written = Fingerprint.of(descriptor: fd) else { throw .system(path: path, operation: "stat", Errno(rawValue: errno)) }
        ownWrites.record(target.displayPath, written)
        return written
    }

    private func writeAll(_ bytes: [UInt8], to fd: CInt, path: String) throws(WriteError) {
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { pwrite(fd, $0.baseAddress! + offset, $0.count - offset, off_t(offset)) }
            if written < 0 {
                if errno == EINTR { continue }
                throw .system(path: path, operation: "write", Errno(rawValue: errno))
            }
            offset += written
        }
    }

    // MARK: - Paths

    /// Where a relative path really leads: its directory and name after resolving symlinks.
    struct Target {
        var directory: String
        var name: String
        /// The path relative to the root that will change (the symlink's target for a link).
        var displayPath: String
    }

    func resolve(_ path: String) throws(WriteError) -> Target {
        let absolute = root + "/" + path
        var resolved = absolute
        if let real = realpath(absolute, nil) {
            resolved = String(cString: real)
            free(real)
        } else {
            // A file that does not exist yet: resolve its directory, keep its name. A symlink to
            // nothing leads where the kernel would create the file (`echo x > link` does): its
            // target, taken relative to the link's own folder, through a chain of such links.
            var candidate = absolute
            for _ in 0..<Self.symlinkHopLimit {
                guard let slash = candidate.lastIndex(of: "/") else { throw .outsideRoot(path: path, target: candidate) }
                let parent = String(candidate[..<slash])
                let name = String(candidate[candidate.index(after: slash)...])
                guard let real = realpath(parent.isEmpty ? "/" : parent, nil) else {
                    throw .system(path: path, operation: "resolve directory", Errno(rawValue: errno))
                }
                let folder = String(cString: real)
                free(real)
                resolved = folder + "/" + name
                guard let status = Fingerprint.of(resolved), status.isSymbolicLink else { break }
                guard let target = Self.linkTarget(resolved) else {
                    throw .system(path: path, operation: "resolve symlink", Errno(rawValue: errno))
                }
                candidate = target.hasPrefix("/") ? target : folder + "/" + target
                resolved = ""
            }
            if resolved.isEmpty { throw .system(path: path, operation: "resolve symlink", .tooManySymbolicLinkLevels) }
        }
        guard resolved.hasPrefix(root + "/") else { throw .outsideRoot(path: path, target: resolved) }
        let slash = resolved.lastIndex(of: "/")!
        return Target(
            directory: String(resolved[..<slash]), name: String(resolved[resolved.index(after: slash)...]),
            displayPath: String(resolved.dropFirst(root.count + 1)))
    }

    /// As many links as the kernel follows in one path (`MAXSYMLINKS`) before `ELOOP`.
    static var symlinkHopLimit: Int { 40 }

    /// What the symbolic link at `path` holds; nil (errno set) when it cannot be read.
    static func linkTarget(_ path: String) -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = readlink(path, &buffer, buffer.count - 1)
        guard count >= 0 else { return nil }
        return String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// `.<name>.autosave-<random>.tmp`: reserved for the agent and ignored by its watcher.
    static func tempName(for name: String) -> String {
        // Ten base-36 digits of one random draw (36^10 < 2^52): one getrandom, not one per digit.
        var random = SystemRandomNumberGenerator()
        let digits = String(random.next() % 3_656_158_440_062_976, radix: 36)
        let suffix = String(repeating: "0", count: 10 - digits.count) + digits
        // Keep the temp name within NAME_MAX (255) even for a 255-byte name.
        let stem = name.utf8.count > 200 ? String(decoding: name.utf8.prefix(200), as: UTF8.self) : name
        return ".\(stem).autosave-\(suffix).tmp"
    }

    /// The umask, read without changing it (`umask(2)` would race with other threads).
    static func processUmask() -> mode_t {
        guard let status = try? FileContents.read("/proc/self/status") else { return 0o022 }
        let text = String(decoding: status, as: UTF8.self)
        for line in text.split(separator: "\n") where line.hasPrefix("Umask:") {
            let value = line.dropFirst("Umask:".count).trimmingPrefix { $0 == " " || $0 == "\t" }
            return mode_t(value, radix: 8) ?? 0o022
        }
        return 0o022
    }
}
