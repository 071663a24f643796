import Synchronization

/// The agent's own commits, so the watcher never reports them as external changes.
///
/// The writer records the fingerprint a file will have right before it renames its temp file
/// into place (or finishes an in-place write); when the watcher settles that path and finds
/// exactly that fingerprint, the change was ours. Anything else — an edit that landed after
/// ours — no longer matches and is reported as usual: provenance first, content settles doubt.
public final class OwnWrites: Sendable {
    private let expected = Mutex<[String: Fingerprint]>([:])

    public init() {}

    /// Records that `path` (relative to the root) is about to become `fingerprint`.
    public func record(_ path: String, _ fingerprint: Fingerprint) {
        expected.withLock { $0[path] = fingerprint }
    }

    /// Forgets an expectation whose write did not happen.
    public func forget(_ path: String) {
        expected.withLock { $0[path] = nil }
    }

    /// Whether `path` now being `current` is the agent's own write; consumes the record either way
    /// once the file has moved past it.
    public func isOwn(_ path: String, current: Fingerprint?) -> Bool {
        expected.withLock { table in
            guard let fingerprint = table[path] else { return false }
            table[path] = nil
            return fingerprint == current
        }
    }

    /// Moves expectations below a renamed directory.
    public func moveDirectory(from: String, to: String) {
        expected.withLock { table in
            for (path, fingerprint) in table where path == from || path.hasPrefix(from + "/") {
                table[path] = nil
                table[to + path.dropFirst(from.count)] = fingerprint
            }
        }
    }
}
