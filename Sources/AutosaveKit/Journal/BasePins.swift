import ByteNames
import Glibc
import SystemPackage

/// The version a clean buffer's first edit was made on, as the buffer read it: what the journal
/// may keep beside the edit, once, instead of writing the buffer's whole text into the journal.
public struct EditedBase: Sendable, Equatable {
    /// The file's bytes as the buffer read them (the buffer's own array, shared, not copied).
    public var bytes: [UInt8]

    /// The version whose bytes are `bytes`.
    public init(bytes: [UInt8]) {
        self.bytes = bytes
    }
}

/// Copies, in the journal's `bases/` folder, of the versions chains of edits stand on: the journal
/// then records a clean file's first keystroke as that keystroke, not as a copy of the file.
///
/// A pin is a copy written from the bytes the buffer read, never a hard link to the file: a link
/// shares the file's inode, so a tool that writes the file in place while the agent is down
/// (`echo >>`, a truncation, nano, VS Code) changed the version the edits were made on, and the
/// edits could not be replayed. A copy is that version whatever happens to the file. It is written
/// before the record that stands on it, made durable by the group commit that makes that record
/// durable (so before the edit is acknowledged), and removed once the record that ends its chain
/// (a full record, or the `saved` marker) is durable. Recovery checks its digest all the same.
struct BasePins {
    let directory: String
    /// The pin each path's chain stands on.
    private var pinned: PathMap<String> = [:]
    /// Pins whose chain ended, to remove once the journal is durable through `sequence`.
    private var released: [(sequence: Int, file: String)] = []
    /// Pins written since the last group commit began, open to be fsync'd by the next one.
    private var unsynced: [FileDescriptor] = []

    init(directory: String) { self.directory = directory }

    /// Where the pin of `path`'s version with `digest` lives (the name is what recovery looks for).
    static func file(in directory: String, path: String, digest: UInt64) -> String {
        directory + "/" + String(ContentDigest.of(Array(path.utf8)), radix: 16) + "-" + String(digest, radix: 16)
    }

    /// Keeps `base` (whose digest is `digest`) as the version `path`'s chain stands on; false
    /// (nothing pinned) when it cannot be written (no space, the folder cannot be made): the
    /// journal then writes the whole text instead.
    mutating func pin(_ base: EditedBase, path: String, digest: UInt64, isDurable: Bool) -> Bool {
        let pin = Self.file(in: directory, path: path, digest: digest)
        if pinned[path] == pin { return true }
        if let index = released.firstIndex(where: { $0.file == pin }) {
            // The same version again (a chain ended and the next begins on the same bytes): the
            // copy is whole, and durable by the commit of the record it was first written for.
            released.remove(at: index)
        } else {
            guard (try? Folders.make(directory)) != nil, let copy = Self.write(base.bytes, to: pin) else { return false }
            if isDurable { unsynced.append(copy) } else { try? copy.close() }
        }
        if let old = pinned[path], old != pin { Self.remove(old) }
        pinned[path] = pin
        return true
    }

    /// Writes `bytes` under a temporary name and renames it to `pin`, so that the name never holds
    /// part of a version (a crash mid-write leaves the temporary name, cleared at the next start).
    ///
    /// - Returns: the copy, open, for the group commit to fsync; nil when it could not be written.
    private static func write(_ bytes: [UInt8], to pin: String) -> FileDescriptor? {
        let temporary = pin + ".tmp"
        Self.remove(temporary)
        var copy: FileDescriptor?
        do {
            let opened = try FileDescriptor.open(
                FilePath(temporary), .writeOnly, options: [.create, .exclusiveCreate, .closeOnExec, .noFollow],
                permissions: [.ownerReadWrite])
            copy = opened
            _ = try opened.writeAll(bytes)
            try FileDescriptor.currentDirectory.rename(temporary, to: pin)
            return opened
        } catch {
            try? copy?.close()
            Self.remove(temporary)
            return nil
        }
    }

    /// The pins written since the last call, for the group commit to fsync (with their folder)
    /// before the journal itself; the caller closes them.
    mutating func takeUnsynced() -> [FileDescriptor] {
        defer { unsynced = [] }
        return unsynced
    }

    /// `path`'s chain ended with the record numbered `sequence`: its pin goes once that record is
    /// durable (at once when `sequence` is nil).
    mutating func release(_ path: String, after sequence: Int?) {
        guard let pin = pinned.removeValue(forKey: path) else { return }
        if let sequence { released.append((sequence, pin)) } else { Self.remove(pin) }
    }

    /// Takes `path`'s pin out of its chain without removing it yet (see `discard`).
    mutating func detach(_ path: String) -> String? { pinned.removeValue(forKey: path) }

    /// Removes a detached pin, unless a new chain stands on the same file meanwhile.
    func discard(_ pin: String) {
        if !pinned.values.contains(pin) { Self.remove(pin) }
    }

    /// The journal is durable through `sequence`: released pins up to it go.
    mutating func removeReleased(through sequence: Int) {
        for entry in released where entry.sequence <= sequence { discard(entry.file) }
        released.removeAll { $0.sequence <= sequence }
    }

    /// Every chain now ends in a durable full record (the journal was rewritten): every pin goes.
    mutating func removeAll() {
        for pin in pinned.values { Self.remove(pin) }
        for entry in released { Self.remove(entry.file) }
        for copy in takeUnsynced() { try? copy.close() }
        pinned = [:]
        released = []
    }

    /// Whether `path`'s chain stands on a pin.
    func isPinned(_ path: String) -> Bool { pinned[path] != nil }

    /// fsyncs `copies` and then, when there were any, their folder; closes every copy either way.
    ///
    /// - Throws: `JournalError.system` naming the folder when a copy's fsync failed.
    static func sync(_ copies: [FileDescriptor], in directory: String) throws(JournalError) {
        guard !copies.isEmpty else { return }
        var failure: Errno?
        for copy in copies {
            do { try copy.sync() } catch { failure = failure ?? error }
            try? copy.close()
        }
        if let failure { throw .system(path: directory, operation: "fsync a base copy in", failure) }
        Folders.syncFolder(directory)
    }

    /// Removes the file at `path`, if it is there.
    private static func remove(_ path: String) {
        try? FileDescriptor.currentDirectory.removeEntry(path)
    }

    /// Removes every file in `directory` (after a start, once no record needs them).
    static func clear(_ directory: String) {
        guard let folder = opendir(directory) else { return }
        defer { closedir(folder) }
        while let entry = readdir(folder) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if name != "." && name != ".." { Self.remove(directory + "/" + name) }
        }
    }
}
