import ByteNames
import Synchronization

/// The agent's own commits and deletions, so the watcher never reports them as external changes.
///
/// The writer records the fingerprint a file will have right before it renames its temp file
/// into place (or finishes an in-place write), and records a deletion right before it unlinks.
/// Whenever the watcher settles that path and finds exactly that state, the change was ours —
/// however many windows the kernel's events for it are spread over (with `settleMs` 0, a swap's
/// two halves settle apart). The first look that finds anything else drops the record, and that
/// change is reported as usual: provenance first, content settles doubt.
public final class OwnWrites: Sendable {
    /// The state each path was left in by the agent: a fingerprint, or nil for "deleted".
    private let expected = Mutex<PathMap<Fingerprint?>>([:])

    public init() {}

    /// Records that `path` (relative to the root) is about to become `fingerprint`.
    public func record(_ path: String, _ fingerprint: Fingerprint) {
        expected.withLock { $0[path] = .some(fingerprint) }
    }

    /// Records that the agent is about to delete `path`.
    public func recordRemoval(_ path: String) {
        expected.withLock { $0[path] = .some(nil) }
    }

    /// Forgets an expectation whose write did not happen.
    public func forget(_ path: String) {
        expected.withLock { $0[path] = nil }
    }

    /// Whether `path` now being `current` (nil: absent) is the agent's own doing. A record that no
    /// longer matches is dropped: the file has moved past the agent's version.
    public func isOwn(_ path: String, current: Fingerprint?) -> Bool {
        expected.withLock { table in
            guard let state = table[path] else { return false }
            if state == current { return true }
            table[path] = nil
            return false
        }
    }

    /// Whether the agent's last record for `path` is a file it wrote there (not a deletion, not none).
    public func expectsFile(_ path: String) -> Bool {
        expected.withLock { table in
            guard let state = table[path] else { return false }
            return state != nil
        }
    }

    /// Whether the agent left `path` in a state it still expects (written or deleted).
    public func isRecorded(_ path: String) -> Bool {
        expected.withLock { $0[path] != nil }
    }

    /// Moves expectations below a renamed directory.
    public func moveDirectory(from: String, to: String) {
        expected.withLock { table in
            for (path, state) in table where path.isPath(inside: from) {
                table[path] = nil
                table[to + String(decoding: path.utf8.dropFirst(from.utf8.count), as: UTF8.self)] = state
            }
        }
    }
}
