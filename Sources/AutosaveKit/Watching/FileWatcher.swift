import ByteNames
import Glibc
import Inotify
import Logging
import Synchronization

/// Watches the root and reports each external change once it has settled, classified.
///
/// Raw kernel events come from `DirectoryWatcher`; this actor owns what follows: the settle
/// window (on an injected clock), classification against the files it knows, rescans after an
/// overflow or the watch limit, and the `external-change` log lines. While nothing changes it
/// holds no timer at all.
public actor FileWatcher<C: Clock> where C.Duration == Duration {
    /// Settled external changes, in the order they settled; the changes of one burst (a chain of
    /// renames, a swap) come together, to be applied together.
    public nonisolated let changes: AsyncStream<[FileChange]>
    /// One element per finished rescan (after an overflow, or of unwatched directories): events
    /// may have been lost, so whoever holds state about files should compare it with the disk.
    public nonisolated let rescans: AsyncStream<Void>
    let rescansContinuation: AsyncStream<Void>.Continuation
    /// One element each time the state directory was found deleted (the watcher already made its
    /// own part of it again); the owner of the journal, lock and socket makes theirs.
    public nonisolated let stateDirectoryLosses: AsyncStream<String>
    let stateDirectoryLossesContinuation: AsyncStream<String>.Continuation
    /// One element, then the end, if the root itself is renamed or deleted: nothing can be saved
    /// at its old path any more.
    public nonisolated let rootChanges: AsyncStream<RootChange>
    let rootChangesContinuation: AsyncStream<RootChange>.Continuation
    /// Everything the agent watches and ignores is decided by these rules.
    public nonisolated let rules: IgnoreRules

    let configuration: ResolvedConfiguration
    let clock: C
    let logger: Logger
    private let inotify: DirectoryWatcher
    private let changesContinuation: AsyncStream<[FileChange]>.Continuation
    private let inputs: AsyncStream<Input>
    private let inputContinuation: AsyncStream<Input>.Continuation
    /// Events the watcher thread has handed over that `run()` has not taken in yet.
    private let eventsInFlight: EventCount

    var settler: ChangeSettler<C.Instant>
    /// The files known to exist. Made from the first scan's listings when first needed, which
    /// is the first thing `run()` does: on a million files that takes tens of ms, which `ready`
    /// need not wait for, as no event is looked at before it is done.
    var known: KnownFiles {
        get {
            makeKnownFiles()
            return knownStorage
        }
        _modify {
            makeKnownFiles()
            yield &knownStorage
        }
    }
    private var knownStorage = KnownFiles([String]())
    /// The first scan's listings, until they are the known files.
    private var firstListings: [DirectoryScan.Listing] = []
    var barrierWaiters: [UInt64: CheckedContinuation<C.Instant?, Never>] = [:]
    /// Every window with a deadline up to this instant has been settled.
    private var settledThrough: C.Instant?
    private var settledWaiters: [(deadline: C.Instant, continuation: CheckedContinuation<Void, Never>)] = []
    /// The deadline of the settling to come: its alarm is armed, or a `.settleDue` is already
    /// queued because it was due.
    private var settleDeadline: C.Instant?
    /// How often unwatched directories are rescanned now; nil while every directory is watched.
    private var rescanEvery: Duration?
    /// The settle and rescan timers, served by one task under `run()`.
    private let alarms: Alarms<C, WatcherAlarm>
    private(set) var isStopped = false
    /// The change time of what was reported last per name, so that a rescan after an overflow
    /// does not report it again. Only recent entries matter: a rescan looks back a few ms.
    var reportedChangeTimes: PathMap<Int64> = [:]
    /// Per name held open while it settled, the process seen writing it, until its burst goes out.
    var writersSeen: PathMap<WritingProcess> = [:]
    /// Names reported removed a moment ago: a rename's first half can settle alone (the settle
    /// looked at the disk after the rename and before its events came in), and the second half,
    /// settling later, is a move from that name all the same.
    var recentlyRemoved: PathMap<C.Instant> = [:]
    /// The root, held open: it says whether the root still exists wherever it is now.
    var rootDescriptor: CInt = -1

    private enum WatcherAlarm: Hashable, Sendable {
        case settle
        case rescan
    }

    private enum Input: Sendable {
        /// An event and when the watcher thread read it: its settle window starts then, not
        /// when the actor gets to it.
        case watch(WatchEvent, at: C.Instant)
        case settleDue
        case rescanDue
        case finished
    }

    /// Rescans of unwatched directories run this often when the configuration says 0.
    static var defaultRescanInterval: Duration { .seconds(30) }

    /// ctime stamps can lag the real change by a clock tick; treat anything this close to the
    /// last moment the watcher was up to date as possibly unseen.
    static var changeTimeMargin: Int64 { 20_000_000 }

    /// Settles put off in a row because events were still on their way.
    private var settleDeferrals = 0
    /// Cookies of renames whose `movedFrom` came and whose `movedTo` has not (yet).
    var renamesHalfSeen: Set<UInt32> = []
    /// The barrier a settle waits for, when a rename's second half may still be on its way, and
    /// the renames it answers for (those half seen when it was asked).
    var renameBarrier: UInt64?
    var renamesAwaited: Set<UInt32> = []
    static var maxSettleDeferrals: Int { 200 }

    /// The agent's own writes, which are never reported.
    let ownWrites: OwnWrites
    /// When the watcher last saw something deleted or renamed away (a `rm -rf` in progress shows
    /// as a stream of these).
    public internal(set) var lastRemovalSeen: C.Instant?
    /// Every change of the tree, for "what changed since?" (`FileWatcher+Ledger`).
    var ledger = ChangeLedger()
    /// Folders the rules ignore that are in the tree: not watched, so anything in them may have
    /// changed at any time.
    var ignoredFolders = PathSet()
    /// A directory could not be watched for good (`watchBlind`): answers are `fresh` from then on.
    var hasBlindDirectory = false
    var changeSignals: [Int: AsyncStream<Void>.Continuation] = [:]
    var nextChangeSignal = 0
    /// How many changes `changes` has carried.
    public private(set) var emittedCount = 0
    /// How many of them were transient (not reported to anyone).
    private var transientCount = 0

    public init(configuration: ResolvedConfiguration, clock: C, logger: Logger, ownWrites: OwnWrites = OwnWrites()) {
        self.ownWrites = ownWrites
        self.configuration = configuration
        self.clock = clock
        self.alarms = Alarms(clock: clock)
        self.logger = logger
        let rules = IgnoreRules(
            patterns: configuration.configuration.watch.ignore, stateDirectory: configuration.stateDirectoryInsideRoot)
        self.rules = rules
        self.settler = ChangeSettler(
            settle: .milliseconds(configuration.configuration.watch.settleMs),
            maxSettle: .milliseconds(configuration.configuration.watch.maxSettleMs))
        (changes, changesContinuation) = AsyncStream.makeStream(of: [FileChange].self)
        (rescans, rescansContinuation) = AsyncStream.makeStream(of: Void.self)
        (stateDirectoryLosses, stateDirectoryLossesContinuation) = AsyncStream.makeStream(of: String.self)
        (rootChanges, rootChangesContinuation) = AsyncStream.makeStream(of: RootChange.self)
        let (inputs, inputContinuation) = AsyncStream.makeStream(of: Input.self)
        (self.inputs, self.inputContinuation) = (inputs, inputContinuation)
        let eventsInFlight = EventCount()
        self.eventsInFlight = eventsInFlight
        // The watcher thread yields each event straight into the inputs, beside the timers'.
        self.inotify = DirectoryWatcher(
            root: configuration.root, ownDirectory: configuration.stateDirectory,
            isIgnored: { directory, name, isDirectory in rules.isIgnored(name, in: directory, isDirectory: isDirectory) },
            ignoreScreen: rules.fileNameScreen,
            isLeftover: { name in IgnoreRules.isAgentTempName(name) }, privateMarker: AgentLock.fileName,
            sink: WatchEventSink(
                deliver: { [clock] event in
                    eventsInFlight.add(1)
                    inputContinuation.yield(.watch(event, at: clock.now))
                },
                end: { inputContinuation.yield(.finished) }))
    }

    /// Watches the whole tree and logs `watching` once every watch is in place.
    ///
    /// Returns the first scan's figures and leftovers; its listings are the known files' now
    /// (on a million files, copying them would take tens of ms), so they are empty.
    ///
    /// - Throws: `InotifyError` when the root cannot be watched at all.
    @discardableResult
    public func start() async throws(InotifyError) -> DirectoryScan {
        var scan = try await inotify.start()
        rootDescriptor = open(configuration.root, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        logger.info(
            "watching",
            metadata: [
                "root": "\(configuration.root)", "dirs": "\(scan.directories)", "watches": "\(scan.watches)",
                "files": "\(scan.fileCount)", "ms": "\(Self.rounded(scan.milliseconds))",
            ])
        // `watching` means every watch is in place: events from now on queue up in `inputs`, and
        // none is looked at before the known files are made from these listings.
        swap(&firstListings, &scan.listings)
        takeIgnoredFolders(scan.ignoredDirectories)
        return scan
    }

    /// Makes the known files from the first scan's listings now, unless they are made already
    /// (`run()` makes them first thing). The listings move in whole: no copy of 100,000 of them,
    /// one hash each.
    public func makeKnownFiles() {
        guard !firstListings.isEmpty else { return }
        var listings: [DirectoryScan.Listing] = []
        swap(&listings, &firstListings)
        knownStorage = KnownFiles(consume listings)
    }

    /// Handles events until `stop()`; returns after the last one.
    public func run() async {
        makeKnownFiles()
        let alarms = self.alarms
        await withDiscardingTaskGroup { group in
            group.addTask { await alarms.run() }
            for await input in inputs {
                switch input {
                case .watch(let event, let time):
                    eventsInFlight.add(-1)
                    handle(event, at: time)
                case .settleDue:
                    settleWindowsDue()
                case .rescanDue: inotify.rescanUnwatched()
                case .finished:
                    finish()
                    return
                }
                scheduleSettleTimer()
            }
        }
    }

    /// Returns once every kernel event that happened before the call has been taken in.
    ///
    /// Changes still inside their settle window are reported when it closes, not before.
    public func sync() async {
        _ = await barrier()
    }

    /// Returns once every change that happened before the call has been reported: the events
    /// are in (a barrier), and the settle windows they opened have closed. Windows opened by
    /// later events do not hold it up.
    public func syncAndSettle() async {
        guard let deadline = await barrier() else { return }
        if let settled = settledThrough, deadline <= settled { return }
        await withCheckedContinuation { settledWaiters.append((deadline, $0)) }
    }

    /// Returns once every settle window whose end the clock has passed is settled and reported.
    ///
    /// For a clock that moves only when told to (tests): the timers it makes due fire in their
    /// own tasks, after the call that moved it has returned, and a test that looks at once finds
    /// a rename not yet followed, then sees it land under its next step.
    func settleDueWindows() async {
        guard let deadline = settler.nextDeadline(), TimerWakeUp.isDue(deadline, at: clock.now) else { return }
        if let settled = settledThrough, deadline <= settled { return }
        await withCheckedContinuation { settledWaiters.append((deadline, $0)) }
    }

    /// Waits for a barrier; returns the latest settle deadline open when it arrived.
    private func barrier() async -> C.Instant? {
        guard !isStopped else { return nil }
        return await withCheckedContinuation { (continuation: CheckedContinuation<C.Instant?, Never>) in
            barrierWaiters[inotify.requestBarrier()] = continuation
        }
    }

    /// Stops watching; `run()` returns and `changes` finishes.
    public func stop() async {
        guard !isStopped else { return }
        isStopped = true
        await inotify.stop()
    }

    /// Fault injection for tests: pauses the kernel reader so a flood overflows its queue.
    public nonisolated func _stallReader() -> ReaderStall { inotify._stallReader() }

    /// The watcher's figures for `status`.
    public var status: WatcherStatus {
        WatcherStatus(
            files: known.count, pendingChanges: settler.pending.count, reportedChanges: emittedCount - transientCount,
            heldForWriters: settler.pending.values.count(where: \.isHeld))
    }

    /// How many names are inside an open settle window.
    public var openWindowCount: Int { settler.pending.count }

    /// The names whose changes are still in their settle window (a rename's new name among them).
    var pendingNames: [String] { settler.pending.keys }

    /// Whether `path` is in a rename whose burst has not settled yet.
    func isInPendingRename(_ path: String) -> Bool { settler.isInPendingRename(path) }

    /// The names still settling that a rename the kernel paired took `source`'s file to last.
    func pendingRenames(from source: String) -> [String] { settler.renameDestinations(from: source) }

    /// How many files the watcher currently knows.
    public var knownFileCount: Int { known.count }

    /// Every file the watcher currently knows, relative to the root (tests compare it with the tree).
    var knownPaths: PathSet { PathSet(known.all) }

    /// The folders holding files the watcher knows now: the baseline walks them a few at a time,
    /// so a million names are never one array.
    var knownFolders: [String] { known.folders }

    /// The files the watcher knows now directly inside `folders`, relative to the root.
    func knownFiles(in folders: some Sequence<String>) -> [String] {
        folders.flatMap { known.files(in: $0) }
    }

    // MARK: - Settling

    /// A settle timer woke, or a deadline already due was queued: settles what is due. The next
    /// timer is worked out afresh afterwards, whichever timer it was.
    private func settleWindowsDue() {
        alarms.disarm(.settle)
        settleDeadline = nil
        settleDue()
    }

    /// The settle timer for `deadline` woke. Events already handed over but not taken in come
    /// first (one may push a window on), so then the settling queues behind them; otherwise it
    /// runs at once, without the wake-up of `run()` that queueing costs.
    private func settleTimerWoke(for deadline: C.Instant) {
        guard settleDeadline == deadline else { return }
        if eventsInFlight.isZero {
            settleWindowsDue()
            scheduleSettleTimer()
        } else {
            settleDeadline = deadline
            inputContinuation.yield(.settleDue)
        }
    }

    private func settleDue() {
        // Settling looks at the disk, which must not be ahead of the events taken in: a rename
        // whose event is still on its way would make half of a swap or a chain look like an edit
        // in place. Those events come first (a bounded number of times, for a tree never quiet).
        if settleDeferrals < Self.maxSettleDeferrals, !eventsInFlight.isZero || inotify.hasUnreadEvents {
            settleDeferrals += 1
            settleDeadline = clock.now
            inputContinuation.yield(.settleDue)
            return
        }
        settleDeferrals = 0
        // The watcher thread reads the kernel's queue in batches and hands events over one at a
        // time: a rename's `movedTo` may be read already and not handed over, where neither the
        // count in flight nor the kernel's queue shows it. A barrier comes after it.
        if !renamesHalfSeen.isEmpty || renameBarrier != nil {
            if renameBarrier == nil {
                renamesAwaited = renamesHalfSeen
                renameBarrier = inotify.requestBarrier()
            }
            return
        }
        // A write's events arrive 0.1-0.3 ms apart: windows closing just after this wake-up are
        // settled by it, not by one more timer.
        let now = clock.now.advanced(by: TimerWakeUp.slack)
        // Bursts closing together go out together: a file renamed into a directory made a moment
        // before shows as a removal in one burst and a creation in another (the rename's second
        // half came before the new directory was watched), and buffers pair them by identity.
        var changes: [FileChange] = []
        // A file some process still holds open for writing may be half written: its window
        // stays open until the writer closes it, or `maxSettleMs`. Asked only of a name written
        // with no close since; its close ends the hold, so one look is enough.
        // (Looked up from the root's descriptor: the root may have been renamed meanwhile.)
        let root = rootDescriptor
        var holders: [(name: String, writer: WritingProcess)] = []
        let named = writersSeen
        let isHeld = { (name: String) -> Bool in
            guard root >= 0, OpenWriters.isHeld(name, in: root, lookingAgain: false) else { return false }
            // Held: the one moment the writer can be named, for history. A look at every process,
            // so once per burst: a log held open for good is not looked for again at its cap.
            if named[name] == nil, let writer = OpenWriters.writers(of: name, in: root).first { holders.append((name, writer)) }
            return true
        }
        let bursts = settler.takeDue(at: now, isHeld: isHeld)
        for (name, writer) in holders { writersSeen[name] = writer }
        for burst in bursts {
            for var change in netChanges(of: burst) {
                change.writer = writersSeen[change.path]
                changes.append(change)
            }
            for name in burst.names { writersSeen[name] = nil }
        }
        if !changes.isEmpty { emit(changes) }
        let removedSomething = changes.contains { $0.kind == .removed && !$0.isTransient }
        // The kernel says nothing when a root that someone still holds (a shell's working
        // directory) is removed: its last entries going is the moment to look.
        if removedSomething { checkRoot() }
        settledThrough = now
        resumeSettledWaiters(through: now)
    }

    /// Resumes the waiters whose windows have all closed by `now` (all of them when nil).
    private func resumeSettledWaiters(through now: C.Instant?) {
        let ready = settledWaiters.filter { now == nil || $0.deadline <= now! }
        settledWaiters.removeAll { now == nil || $0.deadline <= now! }
        for waiter in ready { waiter.continuation.resume() }
    }

    func emit(_ changes: [FileChange], extra: Logger.Metadata = [:]) {
        for change in changes where !change.isTransient {
            var fields: Logger.Metadata = ["path": "\(change.path)", "kind": "\(change.kind.rawValue)"]
            if let from = change.from { fields["from"] = "\(from)" }
            if change.isDirectory { fields["directory"] = "true" }
            if let writer = change.writer {
                fields["program"] = "\(writer.program)"
                fields["pid"] = "\(writer.pid)"
            }
            fields.merge(extra) { _, new in new }
            logger.info("external-change", metadata: fields)
        }
        for change in changes { recordInLedger(change) }
        notifyChangeSubscribers()
        emittedCount += changes.count
        transientCount += changes.count(where: \.isTransient)
        changesContinuation.yield(changes)
    }

    // MARK: - Timers

    private func scheduleSettleTimer() {
        // Settling waits for the barrier, which schedules it when it comes.
        guard renameBarrier == nil else { return }
        let deadline = settler.nextDeadline()
        // Events push their window's deadline later: a timer due earlier stays (it finds nothing
        // due, or less, and the next one is set then) instead of a new timer per event.
        if let current = settleDeadline, let deadline, current <= deadline { return }
        if settleDeadline == nil, deadline == nil { return }
        alarms.disarm(.settle)
        settleDeadline = deadline
        guard let deadline else { return }
        if deadline <= clock.now {
            // Due already (settleMs 0): queued behind the events already in, as an alarm firing
            // now would be, without the alarm and the thread it wakes.
            inputContinuation.yield(.settleDue)
            return
        }
        alarms.arm(.settle, at: TimerWakeUp.alarm(for: deadline)) { [weak self] in await self?.settleTimerWoke(for: deadline) }
    }

    /// Rescans unwatched directories every `interval` until a rescan leaves none unwatched.
    func startRescanTimer(every interval: Duration) {
        guard rescanEvery == nil else { return }
        rescanEvery = interval
        armRescan()
    }

    func stopRescanTimer() {
        rescanEvery = nil
        alarms.disarm(.rescan)
    }

    private func armRescan() {
        guard let interval = rescanEvery else { return }
        let continuation = inputContinuation
        alarms.arm(.rescan, at: clock.now.advanced(by: interval)) { [weak self] in
            continuation.yield(.rescanDue)
            await self?.armRescan()
        }
    }

    private func finish() {
        if rootDescriptor >= 0 { close(rootDescriptor) }
        rootDescriptor = -1
        settleDeadline = nil
        rescanEvery = nil
        alarms.finish()
        for waiter in barrierWaiters.values { waiter.resume(returning: nil) }
        barrierWaiters.removeAll()
        resumeSettledWaiters(through: nil)
        changesContinuation.finish()
        rescansContinuation.finish()
        stateDirectoryLossesContinuation.finish()
        rootChangesContinuation.finish()
        finishChangeSignals()
        inputContinuation.finish()
    }

    static func rounded(_ milliseconds: Double) -> Double { (milliseconds * 10).rounded() / 10 }
}

/// How many events are on their way from the watcher thread to `FileWatcher.run()`.
private final class EventCount: Sendable {
    private let count = Atomic(0)

    func add(_ delta: Int) { count.add(delta, ordering: .relaxed) }

    var isZero: Bool { count.load(ordering: .relaxed) == 0 }
}
