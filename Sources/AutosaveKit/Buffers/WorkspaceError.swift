/// Why a workspace request was refused. Nothing was changed on disk or in any buffer.
public enum WorkspaceError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The path is not a file's name: empty, a folder, a NUL byte, a component over 255 bytes.
    case invalidPath(path: String, reason: String)
    /// The path leads where no client may read or write: outside the root (`..`, an absolute
    /// path, a symbolic link), into `.git/`, or into the state directory.
    case pathRefused(PathRefusal)
    /// `ifRevision` did not match: someone else edited the buffer first.
    case staleRevision(path: String, expected: Int, current: Int)
    /// No buffer is open for the path.
    case notOpen(path: String)
    /// There is no file to remove at the path (and no buffer had one coming).
    case noSuchFile(path: String)
    /// The folder a new file would be created in does not exist (and the client did not ask for
    /// it to be made): an edit accepted there would have nowhere to land.
    case noSuchFolder(path: String, folder: String)
    /// The file could not be read into a buffer.
    case unreadable(DiskVersion.ReadError)
    /// A save failed; the buffer is still dirty and will retry.
    case saveFailed(path: String, WriteError)
    /// The content is larger than `limits.maxFileBytes`.
    case tooLarge(path: String, size: Int, limit: Int)
    /// A ranged edit cannot be placed in the buffer's text (a position past the end, inside a
    /// character, overlapping edits).
    case invalidEdit(path: String, TextEditError)
    /// A patch does not apply (or cannot be read); no buffer was changed.
    case patchRefused(PatchError)
    /// The edit was applied to the buffer but could not be journaled: it would not survive a crash.
    case journalFailed(JournalError)

    /// The workspace's error for a path `PathResolver` refused (a malformed name stays `invalidPath`).
    init(_ refusal: PathRefusal) {
        if case .malformed(let path, let reason) = refusal {
            self = .invalidPath(path: path, reason: reason)
        } else {
            self = .pathRefused(refusal)
        }
    }

    public var description: String {
        switch self {
        case .invalidPath(let path, let reason): "invalid path \(path): \(reason); nothing was changed"
        case .pathRefused(let refusal): "\(refusal); nothing was read or changed"
        case .staleRevision(let path, let expected, let current):
            "\(path) is at revision \(current), not \(expected): it was edited meanwhile; read it again and retry"
        case .notOpen(let path): "\(path) is not open"
        case .noSuchFile(let path): "\(path): no such file; nothing was removed"
        case .noSuchFolder(let path, let folder):
            "\(path): folder \(folder) does not exist; nothing was changed (`write --parents`, or \"createParents\": true, makes it)"
        case .unreadable(let error): error.description
        case .saveFailed(let path, let error): "saving \(path) failed: \(error); the buffer stays dirty and retries"
        case .journalFailed(let error):
            "the edit is in the buffer but not in the journal (\(error)); it will be saved, but a crash before then would lose it"
        case .invalidEdit(let path, let error): "\(path): \(error); nothing was changed"
        case .patchRefused(let error): error.description
        case .tooLarge(let path, let size, let limit):
            "\(path): \(size) bytes is more than limits.maxFileBytes (\(limit)); nothing was changed"
        }
    }
}
