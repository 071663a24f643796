import Synchronization
import SystemPackage

/// The file's previous version, which a save swapped out of its name and left under the temp
/// name: durable history no one needs once the save is durable.
///
/// Removing it frees the old inode, which on ext4 takes a millisecond or more; a save does it
/// after it has reported itself durable, not before. It is removed at most once: by `remove()`,
/// or when released. A crash before then leaves a temp file that the next start removes.
public final class DisplacedVersion: Sendable {
    /// The directory holding it (owned, closed on removal); nil once removed.
    private let directory: Mutex<FileDescriptor?>
    private let name: String

    init(directory: FileDescriptor, name: String) {
        self.directory = Mutex(directory)
        self.name = name
    }

    /// Unlinks it; a later call does nothing.
    public func remove() {
        guard let descriptor = directory.withLock({ $0.take() }) else { return }
        try? descriptor.removeEntry(name)
        try? descriptor.close()
    }

    deinit { remove() }
}

/// A save that is durable on disk.
public struct Commit: Sendable {
    /// The fingerprint of the file now on disk.
    public let fingerprint: Fingerprint
    /// The version it replaced, still to be removed (nil when none was left behind).
    public let displaced: DisplacedVersion?
    /// Why the file's own inode was written instead of replaced; nil when it was replaced.
    public var inPlace: InPlaceReason? = nil
}

/// Why a save wrote the file's own inode rather than swapping a new file in.
public enum InPlaceReason: String, Sendable {
    /// Several names link to the file (`write.hardLinks: preserve`).
    case hardLinks = "hard-links"
    /// Its owner cannot be given to a new file.
    case owner
    /// Its extended attributes or ACL cannot be given to a new file.
    case attributes
    /// Another process holds it open for writing, and the save could wait no longer.
    case openWriter = "open-writer"
}
