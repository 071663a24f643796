import ByteNames
import Glibc

/// The file a clean buffer's first edit was made on, as the buffer knew it: what the journal may
/// pin instead of writing the whole text.
public struct EditedBase: Sendable, Equatable {
    /// The file's absolute path.
    public var file: String
    /// The version as the buffer read it: which file, how long, last modified when.
    public var fingerprint: Fingerprint

    public init(file: String, fingerprint: Fingerprint) {
        self.file = file
        self.fingerprint = fingerprint
    }
}

/// Hard links, in the journal's `bases/` folder, to files as they were on disk when a chain of
/// edits began on them: the journal then records a clean file's first keystroke as that
/// keystroke, not as a copy of the file.
///
/// A link costs no copy, and keeps the version whatever replaces the file by rename (our own
/// saves, `git checkout`, `sed -i`, most editors); recovery checks the version's digest all the
/// same, so a file changed in place is reported, never guessed at. A pin is removed once the
/// record that ends its chain (a full record, or the `saved` marker) is durable.
struct BasePins {
    let directory: String
    /// The pin each path's chain stands on.
    private var pinned: PathMap<String> = [:]
    /// Pins whose chain ended, to remove once the journal is durable through `sequence`.
    private var released: [(sequence: Int, file: String)] = []

    init(directory: String) { self.directory = directory }

    /// Where the pin of `path`'s version with `digest` lives (the name is what recovery looks for).
    static func file(in directory: String, path: String, digest: UInt64) -> String {
        directory + "/" + String(ContentDigest.of(Array(path.utf8)), radix: 16) + "-" + String(digest, radix: 16)
    }

    /// Links `base` as the version `path`'s chain stands on; false (nothing pinned) when the file
    /// is no longer that version or cannot be linked (another file system, no space).
    mutating func pin(_ base: EditedBase, path: String, digest: UInt64, isDurable: Bool) -> Bool {
        guard (try? Folders.make(directory)) != nil else { return false }
        let pin = Self.file(in: directory, path: path, digest: digest)
        unlink(pin)
        guard link(base.file, pin) == 0 else { return false }
        // The same file, not written since the buffer read it (size and nanosecond mtime): a
        // tool may have written it in place a moment before the watcher tells the buffer.
        guard let linked = Fingerprint.of(pin), linked == base.fingerprint else {
            unlink(pin)
            return false
        }
        // The link must outlive a power cut as surely as the record that needs it.
        if isDurable { Folders.syncFolder(directory) }
        if let old = pinned[path], old != pin { unlink(old) }
        pinned[path] = pin
        return true
    }

    /// `path`'s chain ended with the record numbered `sequence`: its pin goes once that record is
    /// durable (at once when `sequence` is nil).
    mutating func release(_ path: String, after sequence: Int?) {
        guard let pin = pinned.removeValue(forKey: path) else { return }
        if let sequence { released.append((sequence, pin)) } else { unlink(pin) }
    }

    /// Takes `path`'s pin out of its chain without removing it yet (see `discard`).
    mutating func detach(_ path: String) -> String? { pinned.removeValue(forKey: path) }

    /// Removes a detached pin, unless a new chain stands on the same file meanwhile.
    func discard(_ pin: String) {
        if !pinned.values.contains(pin) { unlink(pin) }
    }

    /// The journal is durable through `sequence`: released pins up to it go.
    mutating func removeReleased(through sequence: Int) {
        for entry in released where entry.sequence <= sequence { discard(entry.file) }
        released.removeAll { $0.sequence <= sequence }
    }

    /// Every chain now ends in a durable full record (the journal was rewritten): every pin goes.
    mutating func removeAll() {
        for pin in pinned.values { unlink(pin) }
        for entry in released { unlink(entry.file) }
        pinned = [:]
        released = []
    }

    /// Whether `path`'s chain stands on a pin.
    func isPinned(_ path: String) -> Bool { pinned[path] != nil }

    /// Removes every file in `directory` (after a start, once no record needs them).
    static func clear(_ directory: String) {
        guard let folder = opendir(directory) else { return }
        defer { closedir(folder) }
        while let entry = readdir(folder) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if name != "." && name != ".." { unlink(directory + "/" + name) }
        }
    }
}
