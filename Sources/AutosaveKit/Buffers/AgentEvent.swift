/// Something the agent did or saw, for the log and for subscribers (the socket's `subscribe`).
public enum AgentEvent: Sendable, Equatable {
    /// A settled change made by someone else.
    case externalChange(FileChange)
    /// A buffer reached the disk, durably.
    case saved(path: String, revision: Int, bytes: Int)
    /// A save failed; the buffer stays dirty and retries then.
    case saveFailed(path: String, error: String, retryInMilliseconds: Int)
    /// A clean buffer took the new disk version.
    case reloaded(path: String, revision: Int)
    /// A dirty buffer merged an external edit that did not overlap its own.
    case merged(path: String, revision: Int)
    /// Edits overlapped: `kept` keeps the path, the other side was written to `copy`.
    /// `kind` is `overlap` or `removed` (the file was deleted under unsaved edits and recreated).
    case conflict(path: String, kind: String, kept: ConflictSide, copy: String?)
    /// The file of a clean buffer was removed; the buffer closed.
    case removed(path: String)
    /// The file of a buffer was renamed inside the root; the buffer followed.
    case moved(from: String, to: String)
    /// Autosaves wait (a git operation holds `.git/index.lock`).
    case paused(reason: String)
    /// Autosaves run again.
    case resumed(reason: String)
    /// A client's edit was taken into a buffer (`client`: the name it gave, else `client`), so
    /// other clients (a coding agent, an editor) learn that someone changed the file under them.
    case edited(path: String, revision: Int, client: String)
}
