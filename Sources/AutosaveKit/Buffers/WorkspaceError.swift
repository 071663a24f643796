/// Why a workspace request was refused. Nothing was changed on disk or in any buffer.
public enum WorkspaceError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The path is empty, absolute outside the root, or climbs out of it with `..`.
    case invalidPath(path: String, reason: String)
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

    public var description: String {
        switch self {
        case .invalidPath(let path, let reason): "invalid path \(path): \(reason); nothing was changed"
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
