import AutosaveHistory
import ByteNames
import Logging
import Synchronization

/// Every version of every file the agent sees or makes, kept in the history database
/// (`STATEDIR/history.sqlite`): its own saves, with the clients whose edits they hold, and each
/// settled outside change, removal and move, as `external`.
///
/// Recording never waits on the database: buffers and the workspace hand a `Recording` over and
/// go on; `run()` (a child of `Workspace.run()`) writes them one after another, in the order they
/// were handed over, on `BlockingIO`, and makes each batch durable (`VersionStore.sync`) before it
/// waits for the next. Queries wait until everything handed over before them is written, so a
/// client that saved and then asks sees its save. A database that fails is never the agent's
/// failure: what cannot be recorded is logged (`history-failed`) and the agent goes on.
public final class VersionHistory: Sendable {
    /// What happened to a file, to be recorded.
    enum Recording: Sendable {
        /// The agent saved `bytes` (nil: the buffer deleted the file).
        case saved(path: String, bytes: [UInt8]?, who: String, time: Int64)
        /// A buffer read its file, which may be a version history does not have yet.
        case read(path: String, bytes: [UInt8], time: Int64)
        /// An outside change settled: the file at `path` is read when this is written; `writer`
        /// is the process seen writing it, when the watcher saw one.
        case changed(path: String, kind: VersionKind, time: Int64, writer: WritingProcess?)
        case removed(path: String, who: String, time: Int64)
        case moved(from: String, to: String, time: Int64)
        /// A folder went, or moved: every file history knows below it went, or moved, with it.
        /// The agent wrote `bytes` aside as a conflict copy of `path` (at `copy`, as the log
        /// names it); `parent` is what they came from: the version the losing edits were made
        /// on, or the outside change the copy keeps.
        case conflictCopy(path: String, bytes: [UInt8], copy: String, who: String, parent: [UInt8]?, time: Int64)
        case folderRemoved(path: String, time: Int64)
        case folderMoved(from: String, to: String, time: Int64)
        /// Written once everything handed over before it is.
        case barrier(CheckedContinuation<Void, Never>)
    }

    let database: HistoryDatabase
    private let queue = RecordingQueue()
    /// Per path, the clients whose edits its buffer took since its last save.
    private let writers: EditWriters
    let files: HistoryFiles
    let logger: Logger
    /// Hears of each batch written: retention, which prunes when there is something to prune.
    let writes = HistoryWrites()
    /// Milliseconds since the Unix epoch: the wall clock versions are stamped with (tests set it).
    let now: @Sendable () -> Int64

    init(database: HistoryDatabase, files: HistoryFiles, writers: EditWriters, logger: Logger, now: @escaping @Sendable () -> Int64) {
        self.database = database
        self.writers = writers
        writers.startNoting()
        self.files = files
        self.logger = logger
        self.now = now
    }

    // MARK: - Handing over

    /// The agent saved `path` (`bytes` nil: deleted it); the save names the clients whose edits it holds.
    func saved(_ path: String, bytes: [UInt8]?) {
        // A file over the cap is not kept: not held in the queue either.
        if let bytes, !files.isKept(bytes) { return }
        let who = writers.take(path) ?? "agent"
        let time = now()
        queue.push(bytes == nil ? .removed(path: path, who: who, time: time) : .saved(path: path, bytes: bytes, who: who, time: time))
    }

    /// A buffer read `path`: the version its edits stand on, and the one an outside change replaces.
    func read(_ path: String, bytes: [UInt8]) {
        guard files.isKept(bytes) else { return }
        queue.push(.read(path: path, bytes: bytes, time: now()))
    }

    /// The agent wrote a conflict copy of `path`: `bytes` at `copy`, which came from `parent`.
    ///
    /// - Parameter holdsEdits: whether the copy holds the buffer's edits (named by the clients
    ///   that made them, who stay named for the buffer's next save until `editsLetGo(_:)`), not
    ///   the disk's version (an outside writer's).
    func conflictCopied(_ path: String, bytes: [UInt8], copy: String, parent: [UInt8]?, holdsEdits: Bool) {
        guard files.isKept(bytes) else { return }
        let who = holdsEdits ? writers.peek(path) ?? "agent" : "external"
        queue.push(.conflictCopy(path: path, bytes: bytes, copy: copy, who: who, parent: parent, time: now()))
    }

    /// The buffer of `path` let its unsaved edits go (they are in a conflict copy): its next save
    /// does not name their clients.
    func editsLetGo(_ path: String) {
        _ = writers.take(path)
    }

    /// A settled outside change.
    func record(_ change: FileChange) {
        guard !change.isTransient else { return }
        let time = now()
        switch (change.kind, change.isDirectory) {
        case (.modified, false): queue.push(.changed(path: change.path, kind: .modified, time: time, writer: change.writer))
        case (.created, false): queue.push(.changed(path: change.path, kind: .created, time: time, writer: change.writer))
        case (.removed, false): queue.push(.removed(path: change.path, who: "external", time: time))
        case (.moved, false):
            if let from = change.from { queue.push(.moved(from: from, to: change.path, time: time)) }
        case (.removed, true): queue.push(.folderRemoved(path: change.path, time: time))
        case (.moved, true):
            if let from = change.from { queue.push(.folderMoved(from: from, to: change.path, time: time)) }
        case (.created, true), (.modified, true): break
        }
    }

    /// Returns once every recording handed over before the call is written.
    func caughtUp() async {
        await withCheckedContinuation { continuation in
            if !queue.push(.barrier(continuation)) { continuation.resume() }
        }
    }

    /// Ends `run()` once what was handed over so far is written.
    func finish() {
        queue.finish()
    }

    // MARK: - Writing

    /// Writes recordings as they come, until `finish()`; then closes the database.
    func run() async {
        await openDatabase()
        // What queued up while the last batch was written goes in one batch, made durable by one fsync.
        while let batch = await queue.takeAll() {
            var waiters: [CheckedContinuation<Void, Never>] = []
            let work = batch.compactMap { recording -> Recording? in
                if case .barrier(let waiter) = recording {
                    waiters.append(waiter)
                    return nil
                }
                return recording
            }
            // Unopenable (logged once, at open): what was handed over is dropped; waiters still go on.
            if !work.isEmpty, database.isOpen { await write(work) }
            for waiter in waiters { waiter.resume() }
        }
        await BlockingIO.run { [database] in database.close() }
    }

    private func write(_ batch: [Recording]) async {
        let database = self.database
        let files = self.files
        let (recorded, failures, bytesOnDisk) = await BlockingIO.run { () -> ([Version], [(String, HistoryError)], Int64) in
            var recorded: [Version] = []
            var failures: [(String, HistoryError)] = []
            for recording in batch {
                do throws(HistoryError) {
                    recorded += try database.write(recording, files: files)
                } catch {
                    failures.append((recording.path, error))
                }
            }
            do throws(HistoryError) { try database.sync() } catch { failures.append(("", error)) }
            return (recorded, failures, database.bytesOnDisk)
        }
        for version in recorded {
            logger.debug(
                "versioned",
                metadata: [
                    "path": "\(version.path)", "version": "\(version.id)", "kind": "\(version.kind.rawValue)", "who": "\(version.who)",
                    "bytes": "\(version.size.map(String.init) ?? "-")",
                ])
        }
        writes.wrote(bytesOnDisk: bytesOnDisk)
        for (path, error) in failures {
            logger.warning(
                "history-failed",
                metadata: ["path": "\(path)", "error": "\(error)", "next": "that version is not in history; the file itself is untouched"])
        }
    }
}

extension VersionHistory.Recording {
    /// The path a recording is about, for a log line.
    var path: String {
        switch self {
        case .saved(let path, _, _, _), .read(let path, _, _), .changed(let path, _, _, _), .removed(let path, _, _),
            .conflictCopy(let path, _, _, _, _, _), .folderRemoved(let path, _):
            path
        case .moved(_, let to, _), .folderMoved(_, let to, _): to
        case .barrier: ""
        }
    }
}

/// Recordings handed over and not yet written, and `run()` waiting for the next.
private final class RecordingQueue: Sendable {
    private struct State {
        var items: [VersionHistory.Recording] = []
        var waiter: CheckedContinuation<Void, Never>?
        var isFinished = false
    }

    private let state = Mutex(State())

    /// Adds one; false once finished (it is dropped).
    @discardableResult
    func push(_ recording: VersionHistory.Recording) -> Bool {
        let (isTaken, waiter) = state.withLock { state -> (Bool, CheckedContinuation<Void, Never>?) in
            guard !state.isFinished else { return (false, nil) }
            state.items.append(recording)
            defer { state.waiter = nil }
            return (true, state.waiter)
        }
        waiter?.resume()
        return isTaken
    }

    func finish() {
        let waiter = state.withLock { state in
            state.isFinished = true
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume()
    }

    /// Everything queued, waiting for at least one; nil once finished and empty.
    func takeAll() async -> [VersionHistory.Recording]? {
        while true {
            let taken = state.withLock { state -> [VersionHistory.Recording]?? in
                if !state.items.isEmpty {
                    defer { state.items.removeAll() }
                    return .some(state.items)
                }
                return state.isFinished ? .some(nil) : .none
            }
            if let taken { return taken }
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let isReady = state.withLock { state in
                    if !state.items.isEmpty || state.isFinished { return true }
                    state.waiter = continuation
                    return false
                }
                if isReady { continuation.resume() }
            }
        }
    }
}

/// Per path, the clients whose edits its buffer took since its last save: who a save names.
final class EditWriters: Sendable {
    private let writers = Mutex<(isNoting: Bool, byPath: PathMap<[String]>)>((false, [:]))

    /// From now on edits are noted (history is on; without it nothing would ever take them).
    func startNoting() {
        writers.withLock { $0.isNoting = true }
    }

    /// Notes that `client` edited `path`.
    func noteEdit(of path: String, by client: String) {
        writers.withLock { writers in
            guard writers.isNoting else { return }
            var clients = writers.byPath[path] ?? []
            if !clients.contains(client) { clients.append(client) }
            writers.byPath[path] = clients
        }
    }

    /// The clients that edited `path` since the last call for it, as a save names them
    /// (`cli,nvim:41`); nil when none did.
    func take(_ path: String) -> String? {
        writers.withLock { $0.byPath.removeValue(forKey: path) }.map { $0.sorted().joined(separator: ",") }
    }

    /// The clients whose unsaved edits `path`'s buffer holds; nil when none.
    func pending(_ path: String) -> [String]? {
        writers.withLock { $0.byPath[path] }
    }

    /// The clients `take(path)` would name, left to be named by the save that follows.
    func peek(_ path: String) -> String? {
        writers.withLock { $0.byPath[path] }.map { $0.sorted().joined(separator: ",") }
    }
}
