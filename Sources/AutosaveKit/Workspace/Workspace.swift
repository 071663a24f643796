import ByteNames
import FoundationEssentials
import Glibc
import Inotify
import Logging

/// The set of open buffers of one root, and the one door to them: everything the socket and the
/// command line offer goes through here.
///
/// It routes client edits to buffers (opening them on first use) and settled external changes
/// from the watcher to the buffers they concern.
public actor Workspace<C: Clock> where C.Duration == Duration {
    public nonisolated let root: String
    /// The absolute state directory (socket, journal, conflict copies, lock).
    public nonisolated let stateDirectory: String
    /// `root` and a slash: what an absolute path inside the root starts with.
    let rootPrefix: String
    let configuration: ResolvedConfiguration
    /// Fault-injection seams (tests only; empty in the agent).
    let faults: FaultPoints
    var context: BufferContext<C>
    let watcher: FileWatcher<C>
    let broadcast: EventBroadcast
    let logger: Logger
    var buffers: PathMap<FileBuffer<C>> = [:]
    /// Buffers another file was renamed over whose conflict copy is not written yet
    /// (`FileBuffer.isDisplaced`): in no path's place, kept until their copy lands or the flush.
    var displaced: [FileBuffer<C>] = []
    /// What the flushes so far achieved (`flush()` at a client's `stop`, then at shutdown).
    var flushed = FlushOutcome()
    /// Changes taken from the watcher and handled, to let `sync()` wait for them.
    var handledChanges = 0
    /// Names whose look at the disk waits for the bursts already settled behind the one in hand:
    /// their file is another than their buffer's, and one of those bursts may carry the rename
    /// that explains it.
    var postponedLooks: PathSet = []
    /// How many changes the burst being handled holds (0 between bursts).
    var changesInHand = 0
    var handledWaiters: [(count: Int, continuation: CheckedContinuation<Void, Never>)] = []
    /// One element each time the state directory was deleted and the journal made again: the lock
    /// and the control socket, which live there too, must be made again by their owner.
    public nonisolated let stateDirectoryRecreations: AsyncStream<Void>
    let stateDirectoryRecreationsContinuation: AsyncStream<Void>.Continuation

    /// A workspace on `configuration`'s root; nothing is watched, recovered or saved before `start`.
    public init(configuration: ResolvedConfiguration, clock: C, logger: Logger) {
        self.init(configuration: configuration, clock: clock, logger: logger, faults: FaultPoints())
    }

    /// A workspace whose saves pass through `faults`, for tests.
    @_spi(Testing) public init(configuration: ResolvedConfiguration, clock: C, logger: Logger, faults: FaultPoints) {
        self.root = configuration.root
        self.rootPrefix = configuration.root + "/"
        self.stateDirectory = configuration.stateDirectory
        self.configuration = configuration
        self.logger = logger
        self.faults = faults
        let broadcast = EventBroadcast()
        self.broadcast = broadcast
        let ownWrites = OwnWrites()
        let settings = configuration.configuration
        let emit: @Sendable (AgentEvent) -> Void = { broadcast.emit($0) }
        self.context = BufferContext(
            root: configuration.root, configuration: settings,
            writer: AtomicWriter(
                resolver: PathResolver(root: configuration.root, stateDirectory: configuration.stateDirectoryInsideRoot),
                fsync: settings.write.fsync, hardLinks: settings.write.hardLinks, ownWrites: ownWrites, faults: faults),
            copies: ConflictCopies(
                stateDirectory: configuration.stateDirectory, maxCopiesPerFile: settings.conflicts.maxCopiesPerFile,
                fsync: settings.write.fsync),
            clock: clock, logger: logger, emit: emit,
            gitPause: GitPause(root: configuration.root, logger: logger, emit: emit), alarms: Alarms(clock: clock), journal: nil)
        self.watcher = FileWatcher(configuration: configuration, clock: clock, logger: logger, ownWrites: ownWrites)
        (stateDirectoryRecreations, stateDirectoryRecreationsContinuation) = AsyncStream.makeStream(of: Void.self)
    }

    /// Opens the journal, watches the root (logs `watching`), brings back the edits a crash left
    /// unsaved (logs `recovered`), and starts routing external changes to buffers.
    ///
    /// - Returns: what the watcher found: directories, watches and files.
    /// - Parameter carriedOver: unsaved edits of the agent's previous workspace for this root (it
    ///   moved), newer than what the journal holds for their paths.
    /// - Throws: `JournalError` when the journal cannot be used (it is left untouched),
    ///   `InotifyError` when the root cannot be watched.
    @discardableResult
    public func start(carriedOver: [JournalRecord] = []) async throws -> DirectoryScan {
        var recovered: [JournalRecord] = []
        if configuration.configuration.journal.enabled {
            let (journal, recovery) = try EditJournal.open(
                directory: configuration.stateDirectory + "/journal", fsync: configuration.configuration.journal.fsync)
            context = BufferContext(
                root: context.root, configuration: context.configuration, writer: context.writer, copies: context.copies,
                clock: context.clock, logger: context.logger, emit: context.emit, gitPause: context.gitPause, alarms: context.alarms,
                journal: journal)
            if recovery.tornBytes > 0 {
                logger.warning(
                    "journal-torn",
                    metadata: [
                        "bytes": "\(recovery.tornBytes)",
                        "next": "ignored the end of the journal that a crash cut short (it was never acknowledged)",
                    ])
            }
            if let loss = recovery.headerLoss {
                logger.warning(
                    "journal-torn",
                    metadata: [
                        "bytes": "\(loss.bytes)",
                        "next": loss.keptAs.map {
                            "a power cut lost the journal's header; started an empty journal, its bytes are kept in \($0)"
                        } ?? "a power cut left the journal without a whole header (it held no record); started an empty journal",
                    ])
            }
            for broken in recovery.brokenChains {
                logger.error(
                    "journal-corrupt",
                    metadata: [
                        "path": "\(broken.path)", "revision": "\(broken.revision)", "error": "\(broken.reason)",
                        "next": "recovered the revision before it; the journal as it was is kept in \(recovery.keptAs ?? "the state directory")",
                    ])
            }
            recovered = recovery.records
        }
        let carried = PathSet(carriedOver.map(\.path))
        recovered = recovered.filter { !carried.contains($0.path) } + carriedOver
        history = VersionHistory.make(configuration, writers: historyWriters, logger: logger)
        context.history = history
        historyRetention = history.map { HistoryRetention(history: $0, policy: configuration.configuration.history.retention, clock: context.clock) }
        let scan = try await watcher.start()
        removeLeftoverTempFiles(scan.leftovers)
        for record in recovered { await recover(record) }
        return scan
    }

    /// Every version of every file (`history`, `show`, `restore`); nil when `history.enabled` is
    /// false or its database could not be opened (logged).
    public internal(set) var history: VersionHistory?
    /// When history is pruned; nil without history.
    var historyRetention: HistoryRetention<C>?
    /// Who edited each path since its last save, for history (noted from any thread).
    nonisolated let historyWriters = EditWriters()

    /// Whether the root was deleted while the agent ran (the agent then exits with status 1).
    public internal(set) var isRootRemoved = false

    /// Where the root went when it was renamed while the agent ran; this workspace then stops,
    /// and the agent starts a new one there with `unsavedEdits`.
    public internal(set) var movedRoot: String?
    /// The unsaved edits of every buffer when the root moved away (for the next workspace).
    public internal(set) var unsavedEdits: [JournalRecord] = []

    /// Finishes what start-up left for after `ready`: the known files of the first scan; then
    /// history's baseline may begin (in `run()`, in the background).
    public func finishStartUp() async {
        await watcher.makeKnownFiles()
        baselineGate.open()
    }

    /// Opened after `ready`, stopped when the watcher stops: history's baseline runs in between.
    nonisolated let baselineGate = BaselineGate()

    /// Runs the watcher, routes what it reports to the buffers, and fires their autosave timers,
    /// until `shutdown()`; returns once the watcher's last change has been handled.
    public func run() async {
        let watcher = self.watcher
        let alarms = context.alarms
        let history = self.history
        let retention = historyRetention
        await withDiscardingTaskGroup { group in
            group.addTask { await alarms.run() }
            if let history { group.addTask { await history.run() } }
            if let retention { group.addTask { await retention.run() } }
            await withDiscardingTaskGroup { consumers in
                consumers.addTask {
                    await watcher.run()
                    self.baselineGate.stop()
                }
                if let history { consumers.addTask { await self.runBaseline(of: history) } }
                consumers.addTask {
                    for await burst in watcher.changes { await self.handle(burst) }
                }
                consumers.addTask {
                    // Events were lost: whatever the rescan could not pin down, content comparison will.
                    for await _ in watcher.rescans { await self.reconcileAll() }
                }
                consumers.addTask {
                    for await directory in watcher.stateDirectoryLosses { await self.remakeStateDirectory(directory) }
                    self.stateDirectoryRecreationsContinuation.finish()
                }
                consumers.addTask {
                    for await change in watcher.rootChanges {
                        switch change {
                        case .removed: await self.orphanUnsavedEdits()
                        case .moved(let path): await self.handOver(movedTo: path)
                        }
                    }
                }
            }
            // The watcher has stopped (after the flush) and its streams are drained: no autosave
            // is due any more, and history writes what it was handed, then closes.
            alarms.finish()
            retention?.finish()
            history?.finish()
        }
    }

    /// Every event from now on (`saved`, `conflict`, external changes, …).
    public nonisolated func events() -> AsyncStream<AgentEvent> { broadcast.subscribe().events }

    /// Every event from now on, for a subscriber that must be told when it fell too far behind
    /// (`EventSubscription.end()`) rather than be starved in silence; `onCutOff` runs at the
    /// moment it falls `backlog` events behind.
    public nonisolated func subscribe(onCutOff: @escaping @Sendable (_ backlog: Int) -> Void) -> EventSubscription {
        broadcast.subscribe { onCutOff(EventBroadcast.backlog) }
    }

    // MARK: - Requests

    /// Tells subscribers that `client` changed `path` (an accepted write, edit, patch or removal).
    public nonisolated func announceEdit(of path: String, revision: Int, by client: String) {
        historyWriters.noteEdit(of: path, by: client)
        broadcast.emit(.edited(path: path, revision: revision, client: client))
    }

    /// Opens `path` (reading it, or an empty buffer for a new file) and returns its status.
    ///
    /// - Parameter keep: the side that keeps the path when this buffer's edits and the disk's
    ///   overlap, for as long as the buffer is open (an editor that shows the buffer asks for
    ///   `.buffer`: what the person sees stays, the disk's version goes to the conflict copy);
    ///   `.some(nil)` gives it back to `conflicts.keep`; nil leaves it as it is.
    public func open(_ path: String, keep: ConflictSide?? = nil) async throws(WorkspaceError) -> BufferStatus {
        let buffer = try await buffer(for: try normalize(path))
        if let keep { await buffer.keepOnConflict(keep) }
        return await buffer.status
    }

    /// The path a client named, as the agent names it: relative to the root, its folders resolved
    /// as the kernel resolves them (see `normalize`). Every request goes through this one resolver.
    ///
    /// - Throws: `WorkspaceError.invalidPath` naming what is wrong with it.
    public func resolve(_ path: String) throws(WorkspaceError) -> String { try normalize(path) }

    /// `path` relative to the root as `resolve` gives it, but "" for the root itself (`.`, the
    /// root's absolute path, with or without a trailing slash): for what takes a whole tree too
    /// (`history`, `restoreDeleted`), where `resolve` refuses the root as no file.
    ///
    /// - Throws: as `resolve`.
    public func resolveTree(_ path: String) throws(WorkspaceError) -> String {
        if path.isEmpty { return "" }
        if path.isAbsolutePath, let physical = PhysicalPath.of(path), physical.isSameName(as: root) || physical.isSameName(as: rootPrefix) { return "" }
        return try normalize(path)
    }

    /// The buffer's bytes (nil when the buffer deletes its file) and revision.
    public func read(_ path: String) async throws(WorkspaceError) -> (content: [UInt8]?, revision: Int) {
        let (text, revision) = try await readText(path)
        return (text?.bytes, revision)
    }

    /// The buffer's text (nil when the buffer deletes its file) and revision, without a copy.
    public func readText(_ path: String) async throws(WorkspaceError) -> (text: TextRope?, revision: Int) {
        let buffer = try await buffer(for: try normalize(path))
        return (await buffer.text, await buffer.revision)
    }

    /// Replaces the content of `path`; saved after the autosave window.
    ///
    /// - Parameters:
    ///   - changeID: makes a retry safe: the same id is applied once.
    ///   - ifRevision: refuse the edit unless the buffer is at this revision.
    ///   - createParents: make the file's missing folders (inside the root) instead of refusing.
    /// - Returns: the new revision.
    /// - Throws: `WorkspaceError.staleRevision`, `.invalidPath`, `.tooLarge`, `.unreadable`,
    ///   `.noSuchFolder` when the file does not exist and neither does its folder.
    public func write(
        _ path: String, _ content: [UInt8], changeID: UUID? = nil, ifRevision: Int? = nil, createParents: Bool = false
    ) async throws(WorkspaceError) -> Int {
        let accepted = try await accept(path, content, changeID: changeID, ifRevision: ifRevision, createParents: createParents)
        try await accepted.waitUntilDurable()
        return accepted.revision
    }

    /// Takes an edit into its buffer and writes it to the journal, without waiting for the
    /// journal's fsync: a caller that pipelines edits takes the next one meanwhile, and must
    /// `waitUntilDurable()` before it acknowledges this one. Edits apply in call order.
    ///
    /// - Throws: as `write`.
    public func accept(
        _ path: String, _ content: [UInt8], changeID: UUID? = nil, ifRevision: Int? = nil, createParents: Bool = false
    ) async throws(WorkspaceError) -> AcceptedEdit {
        let key = try normalize(path)
        return try await againIfItsBufferCloses { () throws(WorkspaceError) -> AcceptedEdit in
            let wasOpen = buffers[key] != nil
            let buffer = try await buffer(for: key)
            // A file that is not there: its folder must be, or the edit would have nowhere to land.
            if await buffer.base == nil {
                do throws(WorkspaceError) { try prepareFolder(for: key, createParents: createParents) } catch {
                    await closeIfOpenedOnlyToAsk(buffer, at: key, wasOpen: wasOpen)
                    throw error
                }
            }
            let accepted = try await buffer.write(content, changeID: changeID, ifRevision: ifRevision)
            return AcceptedEdit(revision: accepted.revision, ticket: try await journal(accepted), logger: logger)
        }
    }

    /// Runs an edit `request` again, from the look-up of its buffer, when the buffer it found
    /// closed before the edit reached it (its file removed while it was clean, in between): a
    /// closed buffer refuses edits (`notOpen`), as it would take them to no file, and the edit
    /// belongs to a fresh buffer.
    func againIfItsBufferCloses<T>(_ request: () async throws(WorkspaceError) -> T) async throws(WorkspaceError) -> T {
        while true {
            do { return try await request() } catch {
                guard case .notOpen = error else { throw error }
            }
        }
    }

    /// Writes an accepted edit to the journal; its ticket tells when it is durable.
    func journal(_ accepted: FileBuffer<C>.Accepted) async throws(WorkspaceError) -> AcceptedEdit.Ticket? {
        guard let journal = context.journal, let record = accepted.record else { return nil }
        do {
            let sequence = try await journal.write(record)
            // Without fsync an edit is as durable as it gets once written: nothing to wait for.
            return journal.isDurable ? AcceptedEdit.Ticket(journal: journal, sequence: sequence, path: record.path) : nil
        } catch {
            AcceptedEdit.logJournalFailure(error, path: record.path, logger: logger)
            throw .journalFailed(error)
        }
    }

    /// Saves the named buffers now; returns once each is durable, and so is every version history
    /// was handed before the return (these saves' among them): an acknowledged save's version is
    /// in history after `kill -9` and a power cut.
    ///
    /// - Throws: the first failure; the other buffers are still saved.
    public func save(_ paths: [String]) async throws(WorkspaceError) {
        var firstError: WorkspaceError?
        for path in paths {
            let key = try normalize(path)
            guard let buffer = buffers[key] else {
                firstError = firstError ?? .notOpen(path: key)
                continue
            }
            await followRenameOnItsWay(of: buffer)
            do { try await buffer.save() } catch { firstError = firstError ?? error }
        }
        await history?.caughtUp()
        if let firstError { throw firstError }
    }

    /// Saves every dirty buffer now.
    public func saveAll() async throws(WorkspaceError) {
        try await save(buffers.sortedKeys)
    }

    /// Saves `path` if it is dirty, then forgets its buffer.
    public func close(_ path: String) async throws(WorkspaceError) {
        let key = try normalize(path)
        guard let buffer = buffers[key] else { throw .notOpen(path: key) }
        await followRenameOnItsWay(of: buffer)
        try await buffer.close()
        let now = await buffer.path
        if buffers[now] === buffer { buffers[now] = nil }
    }

    /// Closes `buffer` when the refused request that opened it was all it was for: no buffer
    /// is left behind by a request that changed nothing.
    func closeIfOpenedOnlyToAsk(_ buffer: FileBuffer<C>, at key: String, wasOpen: Bool) async {
        guard !wasOpen, buffers[key] === buffer, await buffer.closeIfClean() else { return }
        buffers[key] = nil
    }

    /// Deletes `path` after every edit queued before it, durably, and returns the revision.
    ///
    /// - Throws: `WorkspaceError.noSuchFile` when there is no file and no open buffer for it.
    public func remove(_ path: String, changeID: UUID? = nil, ifRevision: Int? = nil) async throws(WorkspaceError) -> Int {
        let key = try normalize(path)
        let (buffer, accepted) = try await againIfItsBufferCloses { () throws(WorkspaceError) -> (FileBuffer<C>, FileBuffer<C>.Accepted) in
            let wasOpen = buffers[key] != nil
            let buffer = try await self.buffer(for: key)
            // Nothing on disk and nothing coming: refuse, and keep no buffer that was opened only to ask.
            if !wasOpen, await buffer.text == nil {
                await closeIfOpenedOnlyToAsk(buffer, at: key, wasOpen: wasOpen)
                throw .noSuchFile(path: key)
            }
            return (buffer, try await buffer.delete(changeID: changeID, ifRevision: ifRevision))
        }
        try await AcceptedEdit(revision: accepted.revision, ticket: journal(accepted), logger: logger).waitUntilDurable()
        try await buffer.save()
        return accepted.revision
    }

    /// How many conflict copies the state directory holds.
    public nonisolated func conflictCopyCount() -> Int {
        AgentFolderTree.files(below: configuration.stateDirectory + "/conflicts").count
    }

    /// What the watcher knows: directories, watches, files, and unwatched directories.
    public func watcherStatus() async -> WatcherStatus { await watcher.status }

    /// Every open buffer, by path.
    public func status() async -> [BufferStatus] {
        var result: [BufferStatus] = []
        for key in buffers.sortedKeys {
            if let buffer = buffers[key] { result.append(await buffer.status) }
        }
        return result
    }

    /// Returns once every external change made before the call has reached its buffer, and every
    /// version seen or saved before it is durable in history.
    ///
    /// Changes settle first, so this takes up to `watch.settleMs` longer than the change itself.
    public func sync() async {
        await watcher.syncAndSettle()
        await waitForHandledChanges()
        await history?.caughtUp()
    }

    /// Returns once every change the watcher has reported so far has reached its buffer's text.
    ///
    /// A change handed to a buffer during its save is taken in when the save is done (a save
    /// waiting for a writer retries while the writer writes): that is waited for too.
    func waitForHandledChanges() async {
        let target = await watcher.emittedCount
        if handledChanges < target { await withCheckedContinuation { handledWaiters.append((target, $0)) } }
        for buffer in buffers.values { await buffer.waitUntilReconciled() }
    }

    /// Fault injection for tests: pauses the kernel reader so a flood overflows its queue.
    func _stallWatcher() -> ReaderStall { watcher._stallReader() }

    /// Fault injection for tests: stops watching and every timer without saving anything, as a
    /// crash would; unsaved edits remain only in the journal.
    func _abandon() async {
        for buffer in buffers.values { await buffer.abandon() }
        buffers.removeAll()
        await watcher.stop()
    }

    /// Whether no settle window is open and every settled change is in its buffer's text (no
    /// buffer is still reading the disk for one, or waiting for its save to finish first).
    func isQuiet() async -> Bool {
        let open = await watcher.openWindowCount
        let emitted = await watcher.emittedCount
        guard open == 0, handledChanges >= emitted else { return false }
        for buffer in buffers.values where await buffer.isReconciling { return false }
        return true
    }

    /// Every file the watcher knows, relative to the root: once the tree is quiet, the tree itself.
    func knownFiles() async -> PathSet { await watcher.knownPaths }

    /// Waits until the watcher has taken in every kernel event that happened before the call.
    func watcherBarrier() async { await watcher.sync() }

    /// For tests on a manual clock: waits until the settle windows the clock has passed are
    /// settled and their changes have reached the buffers.
    func settleDueWindows() async {
        await watcher.settleDueWindows()
        await waitForHandledChanges()
    }
}
