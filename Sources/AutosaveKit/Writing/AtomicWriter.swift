import Glibc
import SystemPackage

/// Saves a buffer to disk so that a reader sees the old file or the new one, never a mix, and a
/// crash loses neither — and never over an edit the buffer has not seen.
///
/// The recipe: resolve the path beneath the root with `PathResolver` (a link is followed only
/// while it stays inside and out of `.git/` and the state directory), and work in the folder's
/// descriptor it hands back, so nothing renamed over a folder's path meanwhile redirects the
/// save; write a temp file `.<name>.autosave-<random>.tmp` beside the target (`O_EXCL|O_NOFOLLOW`, mode 0600);
/// restore the old owner, `user.*` attributes and access ACL, then mode (a change of owner clears
/// setuid and setgid); `fsync`; check that the file on disk is still the version the buffer was
/// based on (compare-and-swap); `renameat2` (`RENAME_EXCHANGE` over an existing file,
/// `RENAME_NOREPLACE` for a new one); `fsync` the directory; remove the displaced old version. A
/// file with several hard links is written in place under the `preserve` policy, and so is one
/// whose owner or attributes cannot be given to a new file.
public struct AtomicWriter: Sendable {
    /// Where paths lead, and which may be written.
    public let resolver: PathResolver
    /// The folder paths are relative to.
    public var root: String { resolver.root }
    public let fsync: Bool
    public let hardLinks: HardLinkPolicy
    public let ownWrites: OwnWrites
    /// `0666 & ~umask`, the mode of a file created from nothing.
    let newFileMode: mode_t
    /// Where tests step in; none in the agent.
    let faults: FaultPoints

    /// A writer for files below `root` (`.git/` out of bounds); `fsync` false skips the flushes
    /// (for tests and scratch trees: a crash may then lose the newest save), `hardLinks` says how
    /// a linked file is saved.
    public init(root: String, fsync: Bool = true, hardLinks: HardLinkPolicy = .preserve, ownWrites: OwnWrites = OwnWrites()) {
        self.init(resolver: PathResolver(root: root, stateDirectory: nil), fsync: fsync, hardLinks: hardLinks, ownWrites: ownWrites)
    }

    /// A writer for the files `resolver` lets through.
    public init(resolver: PathResolver, fsync: Bool = true, hardLinks: HardLinkPolicy = .preserve, ownWrites: OwnWrites = OwnWrites()) {
        self.init(resolver: resolver, fsync: fsync, hardLinks: hardLinks, ownWrites: ownWrites, faults: FaultPoints())
    }

    /// A writer whose saves pass through `faults`, for tests.
    @_spi(Testing) public init(
        root: String, fsync: Bool = true, hardLinks: HardLinkPolicy = .preserve, ownWrites: OwnWrites = OwnWrites(),
        faults: FaultPoints
    ) {
        self.init(
            resolver: PathResolver(root: root, stateDirectory: nil), fsync: fsync, hardLinks: hardLinks, ownWrites: ownWrites,
            faults: faults)
    }

    /// A writer for the files `resolver` lets through, whose saves pass through `faults`, for tests.
    @_spi(Testing) public init(
        resolver: PathResolver, fsync: Bool = true, hardLinks: HardLinkPolicy = .preserve, ownWrites: OwnWrites = OwnWrites(),
        faults: FaultPoints
    ) {
        self.faults = faults
        self.resolver = resolver
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
    ///   `.refused` (the path leads out of bounds), `.notARegularFile`, or `.system` with the
    ///   errno; no temp file is left.
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
        let target = try locate(path)
        let directory = target.descriptor
        let current = Fingerprint.of(target.name, in: target.folder)
        if let current, !current.isRegularFile { throw .notARegularFile(path: path) }
        // Asked before the compare: a writer half way through has changed the file, and what it
        // has written so far is not for the buffer to merge while it can still wait.
        // A save that writes in place whatever it finds need not look twice (~40 ms) to tell a
        // writer from a fork's inherited descriptor: the look is what a busy writer's next line
        // lands in, and the compare below would fail every time.
        let isHeld = current != nil && OpenWriters.isHeld(target.name, in: target.folder, lookingAgain: heldOpen == .wait)
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
        let target = try locate(path)
        let directory = target.descriptor
        guard Fingerprint.of(target.name, in: target.folder) == expected else { throw .changedOnDisk(path: path) }
        ownWrites.recordRemoval(target.path)
        do throws(Errno) { try directory.removeEntry(target.name) } catch {
            ownWrites.forget(target.path)
            throw .system(path: path, operation: "unlink", error)
        }
        if fsync { try WriteError.step("fsync directory", path) { () throws(Errno) in try directory.sync() } }
    }

    // MARK: - The two ways of writing

    private func replace(
        _ bytes: [UInt8], path: String, target: Location, directory: FileDescriptor, current: Fingerprint?
    ) throws(WriteError) -> Commit {
        let temp = faults.tempName?(target.name) ?? Self.tempName(for: target.name)
        let file = try WriteError.step("create temp file", path) { () throws(Errno) in
            try directory.open(
                temp, .writeOnly, options: [.create, .exclusiveCreate, .noFollow, .closeOnExec], permissions: [.ownerReadWrite])
        }
        var committed = false
        var isOpen = true
        defer {
            if isOpen { try? file.close() }
            if !committed { try? directory.removeEntry(temp) }
        }
        try WriteError.step("write", path) { () throws(Errno) in try file.writeAll(bytes, atOffset: 0) }
        if let current {
            // What cannot be kept by replacing the file is kept by writing it in place instead.
            func inPlace(_ reason: InPlaceReason) throws(WriteError) -> Commit {
                Commit(
                    fingerprint: try writeInPlace(bytes, path: path, target: target, directory: directory, expected: current),
                    displaced: nil, inPlace: reason)
            }
            // The owner first: changing it clears setuid and setgid, so the mode goes on after it.
            if current.owner != getuid() || current.group != getgid(),
                (try? file.changeOwner(user: current.owner, group: current.group)) == nil
            {
                return try inPlace(.owner)
            }
            // Tags and the access ACL go over too, all of them or none. They are read through the
            // directory already open, so a directory swapped for a symlink meanwhile cannot lend
            // the attributes of a file outside the root.
            let attributes: ExtendedAttributes
            do { attributes = try ExtendedAttributes.read("/proc/self/fd/\(directory.rawValue)/\(target.name)") } catch {
                if Fingerprint.of(target.name, in: directory.rawValue) == nil { throw .changedOnDisk(path: path) }
                return try inPlace(.attributes)
            }
            do { try attributes.apply(to: file) } catch { return try inPlace(.attributes) }
        }
        // After the owner and the ACL: the mode is the original's, group bits and ACL mask alike.
        let mode = current.map { mode_t($0.mode) & 0o7777 } ?? newFileMode
        try WriteError.step("chmod temp file", path) { () throws(Errno) in try file.changeMode(mode) }
        if fsync { try WriteError.step("fsync", path) { () throws(Errno) in try file.sync() } }
        guard let written = Fingerprint.of(descriptor: file.rawValue) else {
            throw .system(path: path, operation: "stat temp file", Errno(rawValue: errno))
        }
        // Closed before it takes the name: a file open for writing is one a writer may be half
        // way through, and the watcher would hold its change back until the close.
        try? file.close()
        isOpen = false
        faults.beforeCommit?(path)
        ownWrites.record(target.path, written)
        // Compare-and-swap: the last look at the target before it is replaced.
        guard Fingerprint.of(target.name, in: directory.rawValue) == current else {
            ownWrites.forget(target.path)
            throw .changedOnDisk(path: path)
        }
        // An existing file is swapped with the temp rather than renamed over: someone may replace
        // it between the check above and the rename, and a swap destroys no version.
        faults.beforeRename?(path)
        var isExchanged = false
        do throws(Errno) {
            if current == nil {
                try directory.rename(temp, to: target.name, .failingIfTaken)
            } else {
                do throws(Errno) {
                    try directory.rename(temp, to: target.name, .exchanging)
                    isExchanged = true
                } catch where [.invalidArgument, .noFunction, .notSupported].contains(error) {
                    // A filesystem without RENAME_EXCHANGE: the plain rename, with its tiny window.
                    try directory.rename(temp, to: target.name)
                }
            }
        } catch {
            ownWrites.forget(target.path)
            if error == .fileExists { throw .changedOnDisk(path: path) }
            throw .system(path: path, operation: "rename", error)
        }
        if isExchanged, Fingerprint.of(temp, in: directory.rawValue) != current {
            // The swap displaced a version written after the check: give it its name back and
            // let the buffer merge with it. Ours is still in the buffer.
            committed = true
            ownWrites.forget(target.path)
            if (try? directory.rename(temp, to: target.name, .exchanging)) != nil,
                Fingerprint.of(temp, in: directory.rawValue) == written
            {
                try? directory.removeEntry(temp)
            }
            // Otherwise the temp name holds someone's version: it is left in place, not deleted.
            throw .changedOnDisk(path: path)
        }
        committed = true
        // The old version under the temp name goes with the directory's descriptor to whoever
        // removes it; on a failed fsync it is removed right away (the release below).
        var displaced: DisplacedVersion?
        if isExchanged {
            if let kept = try? directory.duplicate() {
                displaced = DisplacedVersion(directory: kept, name: temp)
            } else {
                try? directory.removeEntry(temp)
            }
        }
        if fsync { try WriteError.step("fsync directory", path) { () throws(Errno) in try directory.sync() } }
        return Commit(fingerprint: written, displaced: displaced)
    }

    /// Overwrites the file's own inode (several hard links, or an owner or extended attributes we
    /// cannot give a new file).
    private func writeInPlace(
        _ bytes: [UInt8], path: String, target: Location, directory: FileDescriptor, expected: Fingerprint
    ) throws(WriteError) -> Fingerprint {
        let file = try WriteError.step("open", path) { () throws(Errno) in
            try directory.open(target.name, .writeOnly, options: [.noFollow, .closeOnExec])
        }
        defer { try? file.close() }
        guard Fingerprint.of(descriptor: file.rawValue) == expected else { throw .changedOnDisk(path: path) }
        try WriteError.step("write", path) { () throws(Errno) in try file.writeAll(bytes, atOffset: 0) }
        try WriteError.step("truncate", path) { () throws(Errno) in try file.truncate(to: bytes.count) }
        if fsync { try WriteError.step("fsync", path) { () throws(Errno) in try file.sync() } }
        guard let written = Fingerprint.of(descriptor: file.rawValue) else {
            throw .system(path: path, operation: "stat", Errno(rawValue: errno))
        }
        ownWrites.record(target.path, written)
        return written
    }

    // MARK: - Paths

    /// Where `path` leads, its folder open: refused when it leads out of bounds, a missing
    /// folder reported as `ENOENT` (nowhere to land).
    ///
    /// - Throws: `WriteError.refused`, or `.system` naming the missing folder.
    public func locate(_ path: String) throws(WriteError) -> Location {
        let resolution: PathResolver.Resolution
        do { resolution = try resolver.resolve(path) } catch { throw WriteError(error) }
        guard let location = resolution.location else {
            throw .system(path: path, operation: "open folder \(resolution.missingFolder ?? "")", .noSuchFileOrDirectory)
        }
        return location
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
