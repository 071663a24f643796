import ByteNames
import Logging
import Synchronization

/// What every buffer of a workspace shares: where the root is, how to write, whom to tell.
struct BufferContext<C: Clock>: Sendable where C.Duration == Duration {
    let root: String
    let configuration: Configuration
    let writer: AtomicWriter
    let copies: ConflictCopies
    let clock: C
    let logger: Logger
    let emit: @Sendable (AgentEvent) -> Void
    let gitPause: GitPause
    /// Every buffer's autosave timer, keyed by the buffer; `Workspace.run()` runs it.
    let alarms: Alarms<C, ObjectIdentifier>
    /// Where accepted edits are kept until saved; nil when `journal.enabled` is false.
    let journal: EditJournal?
    /// Where every version goes; nil when `history.enabled` is false (or it could not be opened).
    var history: VersionHistory? = nil

    func absolute(_ path: String) -> String { root + "/" + path }

    /// An absolute path as the log shows it: relative when it lies inside the root.
    func shown(_ absolute: String) -> String {
        absolute.pathBelow(root) ?? absolute
    }
}

/// Autosaves wait while a git operation holds `.git/index.lock`, so a checkout or rebase never
/// races a save. Explicit saves do not wait.
///
/// The lock is looked at only when a save is due, and polled only while it exists: nothing runs
/// while nothing changes.
final class GitPause: Sendable {
    let lockPath: String
    private let isPaused = Mutex(false)
    private let logger: Logger
    private let emit: @Sendable (AgentEvent) -> Void

    static var pollInterval: Duration { .milliseconds(100) }

    init(root: String, logger: Logger, emit: @escaping @Sendable (AgentEvent) -> Void) {
        self.lockPath = root + "/.git/index.lock"
        self.logger = logger
        self.emit = emit
    }

    /// Whether autosaves must wait now; logs `paused`/`resumed` on each transition.
    func mustWait() -> Bool {
        let locked = Fingerprint.of(lockPath) != nil
        let changed = isPaused.withLock { paused in
            defer { paused = locked }
            return paused != locked
        }
        if changed {
            let reason = "a git operation holds .git/index.lock"
            if locked {
                logger.notice("paused", metadata: ["reason": "\(reason)", "next": "autosaves wait until it is released"])
                emit(.paused(reason: reason))
            } else {
                logger.notice("resumed", metadata: ["reason": ".git/index.lock was released"])
                emit(.resumed(reason: ".git/index.lock was released"))
            }
        }
        return locked
    }
}
