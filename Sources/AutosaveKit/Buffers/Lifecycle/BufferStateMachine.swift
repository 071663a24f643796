/// The life of one buffer as a pure value: whether it has read its file, whether it holds edits
/// the disk does not, whether a save or a look at the disk is under way, and who waits for them.
///
/// No clock, no I/O, no actor: `FileBuffer` feeds it what happened (an event, one `mutating func`
/// each) and carries out what it answers (an action). Every transition is in this file, and
/// `docs/architecture.md` draws them (`BufferLifecycleDiagramTests` holds the two together).
/// An event that cannot happen in the state at hand is a bug in the driver: it stops a debug
/// build (`preconditionFailure`) and is logged `internal-error` in a release build, where the
/// state is left as it was — never a silent no-op.
///
/// What it guarantees, and `FuzzBufferStateMachine` checks after every event of random sequences:
/// - an accepted revision is never dropped: the buffer closes (other than abandoned at shutdown
///   or by a crash test, where the journal keeps it) only clean, or with that revision copied
///   aside, or renamed over while its unsaved edit was a delete (the file it would delete is gone);
/// - a save never starts while a change of the disk is being looked at or waits to be: it never
///   writes over a version the buffer has not taken in;
/// - every waiter is handed back exactly once, and none is left in `closed`;
/// - `closed` is terminal.
public struct BufferStateMachine<Waiter: Sendable>: Sendable {
    /// Where the buffer is in its life.
    public enum State: Sendable {
        /// Not read yet, or the last read failed (the next caller reads again).
        case unread
        /// The first read is under way; `waiters` arrived meanwhile and wait for it. A change of
        /// the disk reported meanwhile (which the read may have missed) is pending in `activity`.
        case reading(waiters: [Waiter], activity: Activity)
        /// The text is what the disk holds (as far as the buffer knows).
        case clean(Activity)
        /// The text holds edits the disk does not: an autosave is due.
        case dirty(Activity)
        /// Another file was renamed over this buffer's file while it held unsaved edits, and
        /// their conflict copy could not be written yet: no path leads here, it never saves, its
        /// timer tries the copy again.
        case displaced(Activity)
        /// Terminal: nothing reaches the buffer any more.
        case closed(Closing)
    }

    /// What is under way in an open buffer, and who waits for it.
    public struct Activity: Sendable {
        /// The save in flight, if one is.
        public var save: Save = .idle
        /// Looks at the disk under way: each reads the file before it changes the text.
        public var reconcilesInFlight = 0
        /// Callers waiting until every change of the disk handed to the buffer is in its text.
        public var reconcileWaiters: [Waiter] = []
        /// The autosave fell due while the disk was being looked at: it goes once that is done.
        public var isSaveDueAfterReconcile = false
        /// The last save found another process writing the file and waits for it to close it
        /// (logged once per wait).
        public var isWaitingForWriter = false
    }

    /// A save's progress.
    public enum Save: Sendable {
        case idle
        /// Writing `revision`; `diskChangedMeanwhile`: a change of the disk arrived during it and
        /// is looked at once it is done; `waiters`: callers of `save()` waiting for it.
        case saving(revision: Int, diskChangedMeanwhile: Bool, waiters: [Waiter])
    }

    /// Why a buffer closed.
    public enum Closing: String, Sendable, CaseIterable {
        /// Asked to close, clean (its edits saved, or none).
        case requested
        /// Its file was removed or renamed away while it was clean.
        case removed
        /// Another file was renamed over it; its unsaved edits (if any) are in a conflict copy.
        case replaced
        /// Dropped as it was: the agent is stopping (after its flush saved, copied or reported
        /// every edit), its root is gone, or a test simulates a crash. The journal keeps the edits.
        case abandoned
    }

    /// How a save ended.
    public enum SaveOutcome: Sendable, Equatable {
        /// The file holds `revision` (or is deleted, for a deleting buffer).
        case saved(revision: Int)
        /// Another process holds the file open for writing: nothing was written.
        case heldOpen
        /// The file changed since the buffer read it: nothing was written; it merges first.
        case changedOnDisk
        /// Nothing was written; the save retries with backoff.
        case failed
    }

    public private(set) var state: State = .unread
    /// The latest revision the driver reported.
    public private(set) var revision = 0
    /// The revision the last successful save wrote, nil before the first.
    public private(set) var savedRevision: Int?
    /// The latest revision written to a conflict copy, nil before the first.
    public private(set) var keptAsideRevision: Int?
    /// Where an illegal event is reported in a release build (`internal-error`).
    private let reportIllegal: @Sendable (String) -> Void

    /// - Parameter reportIllegal: logs an event the state did not allow (release builds only;
    ///   a debug build stops at it).
    public init(reportIllegal: @escaping @Sendable (String) -> Void) {
        self.reportIllegal = reportIllegal
    }

    // MARK: - Reading the state

    /// Whether the first read is done and the buffer is not closed.
    public var isOpen: Bool {
        switch state {
        case .clean, .dirty, .displaced: true
        case .unread, .reading, .closed: false
        }
    }

    /// Whether the first read has not completed yet.
    public var isLoading: Bool {
        switch state {
        case .unread, .reading: true
        case .clean, .dirty, .displaced, .closed: false
        }
    }

    /// Whether the buffer holds something the disk does not.
    public var isDirty: Bool {
        switch state {
        case .dirty, .displaced: true
        case .unread, .reading, .clean, .closed: false
        }
    }

    public var isClosed: Bool {
        if case .closed = state { return true }
        return false
    }

    /// Whether another file took this buffer's place and its copy is still to be written.
    public var isDisplaced: Bool {
        if case .displaced = state { return true }
        return false
    }

    /// Whether a save is being written right now.
    public var isSaving: Bool {
        guard let activity, case .saving = activity.save else { return false }
        return true
    }

    /// Whether a change of the disk has reached the buffer but not yet its text.
    public var isReconciling: Bool {
        activity.map(isReconciling) ?? false
    }

    /// Whether the autosave timer has anything to do: unsaved edits to save, or a copy to retry.
    public var wantsTimer: Bool { isDirty }

    private var activity: Activity? {
        switch state {
        case .clean(let activity), .dirty(let activity), .displaced(let activity), .reading(_, let activity): activity
        case .unread, .closed: nil
        }
    }

    // MARK: - Loading

    /// What a caller that needs the file read does.
    public enum LoadAction: Sendable, Equatable {
        /// Read it: no read is under way.
        case read
        /// Wait (`waitForLoad`): another caller's read is under way.
        case wait
        /// Nothing: the buffer is read (or closed).
        case ready
    }

    /// A caller needs the file read before it goes on.
    public mutating func loadRequested() -> LoadAction {
        switch state {
        case .unread:
            state = .reading(waiters: [], activity: Activity())
            return .read
        case .reading: return .wait
        case .clean, .dirty, .displaced, .closed: return .ready
        }
    }

    /// Whether a waiter was kept (`.suspend`) or is to be handed back at once (`.resumeNow`).
    public enum WaitAction: Sendable, Equatable {
        case suspend
        case resumeNow
    }

    /// `waiter` waits for the read under way.
    public mutating func waitForLoad(_ waiter: Waiter) -> WaitAction {
        guard case .reading(var waiters, let activity) = state else { return .resumeNow }
        waiters.append(waiter)
        state = .reading(waiters: waiters, activity: activity)
        return .suspend
    }

    /// The first read completed at `revision`.
    ///
    /// - Returns: the waiters to resume (they find the buffer read), and whether a change of the
    ///   disk arrived during the read: then read the disk again now (the change counts as being
    ///   looked at) and report `reconcileFinished`.
    public mutating func loaded(revision: Int, isDirty: Bool) -> (waiters: [Waiter], mustReconcile: Bool) {
        guard case .reading(let waiters, var activity) = state else {
            // Abandoned while it read: `closed` handed the waiters back.
            if isClosed { return ([], false) }
            illegal("loaded")
            return ([], false)
        }
        self.revision = revision
        let mustReconcile = activity.reconcilesInFlight > 0
        activity.reconcilesInFlight = mustReconcile ? 1 : 0
        state = isDirty ? .dirty(activity) : .clean(activity)
        return (waiters, mustReconcile)
    }

    /// The first read failed.
    ///
    /// - Returns: the waiters to resume (each reads again; a change of the disk that arrived
    ///   meanwhile is in whatever the next read finds).
    public mutating func loadFailed() -> [Waiter] {
        guard case .reading(let waiters, let activity) = state else {
            if isClosed { return [] }
            illegal("loadFailed")
            return []
        }
        state = .unread
        return waiters + activity.reconcileWaiters
    }

    // MARK: - Edits

    /// What the driver does about an edit.
    public enum EditAction: Sendable, Equatable {
        /// Take it.
        case accept
        /// Refuse it: the buffer is closed (a request raced its close) and would drop it.
        case refuse
    }

    /// Asks whether an edit may be taken now.
    public func editRequested() -> EditAction {
        isClosed ? .refuse : .accept
    }

    /// The text or the version on disk changed (an edit, a reload, a merge, a save's new base):
    /// the buffer is at `revision`, dirty or not.
    public mutating func contentChanged(revision: Int, isDirty: Bool) {
        switch state {
        case .clean(let activity), .dirty(let activity):
            self.revision = revision
            state = isDirty ? .dirty(activity) : .clean(activity)
        case .displaced:
            // It stays displaced whatever its text: no path holds that text now (the file it
            // matched was renamed over), so its copy is written all the same.
            self.revision = revision
        case .unread, .reading:
            // The first read sets the text and its base before `loaded`.
            self.revision = revision
        case .closed:
            illegal("contentChanged")
        }
    }

    // MARK: - Saves

    /// What a save asked for does.
    public enum SaveAction: Sendable, Equatable {
        /// Write `revision` now.
        case start(revision: Int)
        /// A save is in flight: wait for it (`waitForSave`), then ask again.
        case waitForSave
        /// A change of the disk is being looked at: wait for it (`waitUntilReconciled`), then
        /// ask again; a timer's save goes by itself once it is done (`reconcileFinished`).
        case waitForReconcile
        /// Nothing to save (clean or closed).
        case nothingToSave
        /// The buffer is displaced: write its conflict copy instead.
        case copyAside
    }

    /// A save is due (the timer) or asked for (`save()`).
    public mutating func saveRequested() -> SaveAction {
        switch state {
        case .unread, .reading, .clean, .closed:
            return .nothingToSave
        case .displaced:
            return .copyAside
        case .dirty(var activity):
            if case .saving = activity.save { return .waitForSave }
            if activity.reconcilesInFlight > 0 {
                activity.isSaveDueAfterReconcile = true
                state = .dirty(activity)
                return .waitForReconcile
            }
            activity.save = .saving(revision: revision, diskChangedMeanwhile: false, waiters: [])
            state = .dirty(activity)
            return .start(revision: revision)
        }
    }

    /// `waiter` waits for the save in flight.
    public mutating func waitForSave(_ waiter: Waiter) -> WaitAction {
        guard var activity, case .saving(let revision, let changed, var waiters) = activity.save else { return .resumeNow }
        waiters.append(waiter)
        activity.save = .saving(revision: revision, diskChangedMeanwhile: changed, waiters: waiters)
        setActivity(activity)
        return .suspend
    }

    /// What follows a save.
    public struct SaveFinished: Sendable {
        /// Callers of `save()` that waited for it.
        public var waiters: [Waiter]
        /// Look at the disk now: it changed during the save, or under it.
        public var mustReconcile: Bool
        /// The save found a writer and this wait begins now (log it once).
        public var isFirstWaitForWriter: Bool
    }

    /// The save in flight ended with `outcome`. When it must reconcile, the change counts as
    /// being looked at from now (no `sync` returns before it is in the text): read the disk, as
    /// after `diskChanged` answered `.read`, and report `reconcileFinished`.
    public mutating func saveFinished(_ outcome: SaveOutcome) -> SaveFinished {
        guard var activity, case .saving(let started, let changed, let waiters) = activity.save else {
            // Abandoned while it wrote: `closed` handed the waiters back.
            if isClosed { return SaveFinished(waiters: [], mustReconcile: false, isFirstWaitForWriter: false) }
            illegal("saveFinished")
            return SaveFinished(waiters: [], mustReconcile: false, isFirstWaitForWriter: false)
        }
        activity.save = .idle
        var isFirstWait = false
        switch outcome {
        case .saved(let revision):
            if revision != started {
                illegal("saveFinished(saved \(revision)) of a save of \(started)")
                return SaveFinished(waiters: [], mustReconcile: false, isFirstWaitForWriter: false)
            }
            savedRevision = revision
            activity.isWaitingForWriter = false
        case .heldOpen:
            isFirstWait = !activity.isWaitingForWriter
            activity.isWaitingForWriter = true
        case .changedOnDisk, .failed:
            break
        }
        let mustReconcile = changed || outcome == .changedOnDisk
        if mustReconcile { activity.reconcilesInFlight += 1 }
        setActivity(activity)
        return SaveFinished(waiters: waiters, mustReconcile: mustReconcile, isFirstWaitForWriter: isFirstWait)
    }

    // MARK: - Changes of the disk

    /// What the driver does about a change of the disk.
    public enum ReconcileAction: Sendable, Equatable {
        /// Read the disk and take the change in; report `reconcileFinished` after.
        case read
        /// A save is in flight: the change is looked at once it is done (`saveFinished`).
        case afterSave
        /// The first read is under way and may have missed it: looked at once it is done (`loaded`).
        case afterLoad
        /// The buffer is closed, or not being read yet (its read will see the file as it is), or
        /// displaced (its path holds another file now, which is none of its business).
        case ignore
    }

    /// Someone else changed the buffer's file (or may have).
    public mutating func diskChanged() -> ReconcileAction {
        guard var activity, !isDisplaced else { return .ignore }
        if case .reading = state {
            activity.reconcilesInFlight = 1
            setActivity(activity)
            return .afterLoad
        }
        if case .saving(let revision, _, let waiters) = activity.save {
            activity.save = .saving(revision: revision, diskChangedMeanwhile: true, waiters: waiters)
            setActivity(activity)
            return .afterSave
        }
        activity.reconcilesInFlight += 1
        setActivity(activity)
        return .read
    }

    /// What follows a look at the disk.
    public struct ReconcileFinished: Sendable {
        /// Callers waiting until the disk's changes are in the text (none while others remain).
        public var waiters: [Waiter]
        /// An autosave fell due meanwhile: arm the timer again.
        public var mustRearm: Bool
    }

    /// A look at the disk `diskChanged` asked for is done (whatever it found).
    public mutating func reconcileFinished() -> ReconcileFinished {
        guard var activity, activity.reconcilesInFlight > 0 else {
            // Closed meanwhile (the file removed while clean): `closed` handed the waiters back.
            if isClosed { return ReconcileFinished(waiters: [], mustRearm: false) }
            illegal("reconcileFinished")
            return ReconcileFinished(waiters: [], mustRearm: false)
        }
        activity.reconcilesInFlight -= 1
        var finished = ReconcileFinished(waiters: [], mustRearm: false)
        if activity.reconcilesInFlight == 0 {
            finished.mustRearm = activity.isSaveDueAfterReconcile
            activity.isSaveDueAfterReconcile = false
            if !isReconciling(activity) {
                finished.waiters = activity.reconcileWaiters
                activity.reconcileWaiters = []
            }
        }
        setActivity(activity)
        return finished
    }

    /// `waiter` waits until every change of the disk handed to the buffer is in its text.
    public mutating func waitUntilReconciled(_ waiter: Waiter) -> WaitAction {
        guard var activity, isReconciling(activity) else { return .resumeNow }
        activity.reconcileWaiters.append(waiter)
        setActivity(activity)
        return .suspend
    }

    private func isReconciling(_ activity: Activity) -> Bool {
        if case .saving(_, true, _) = activity.save { return true }
        return activity.reconcilesInFlight > 0
    }

    // MARK: - Copies aside and closing

    /// `revision` was written to a conflict copy (also after a close: a copy begun before the
    /// buffer was abandoned still lands).
    public mutating func keptAside(revision: Int) {
        keptAsideRevision = revision
    }

    /// What the driver does when another file was renamed over the buffer's.
    public enum ReplacedAction: Sendable, Equatable {
        /// Write the unsaved edits to a conflict copy, then report `replacedCopyFinished`.
        case copyAside
        /// Nothing to keep: the buffer is closed.
        case closed
    }

    /// Another file was renamed over the buffer's file; `hasEditsToKeep`: its text is not what
    /// the disk held (and is a text, not a pending delete).
    ///
    /// - Returns: what to do, and the waiters to resume when it closed.
    public mutating func replaced(hasEditsToKeep: Bool) -> (action: ReplacedAction, waiters: [Waiter]) {
        switch state {
        case .dirty(let activity) where hasEditsToKeep, .displaced(let activity) where hasEditsToKeep:
            state = .displaced(activity)
            return (.copyAside, [])
        case .closed:
            return (.closed, [])
        default:
            return (.closed, close(.replaced))
        }
    }

    /// The conflict copy of a displaced buffer was written with `revision` in it (nil: it could
    /// not be written, and the buffer stays displaced for its timer to try again).
    ///
    /// - Returns: whether the buffer closed, and the waiters to resume then. It stays displaced
    ///   when edits arrived while the copy was written: the copy is made again.
    public mutating func replacedCopyFinished(copied revision: Int?) -> (isClosed: Bool, waiters: [Waiter]) {
        switch state {
        case .displaced:
            guard let revision else { return (false, []) }
            keptAsideRevision = revision
            if revision < self.revision { return (false, []) }
            return (true, close(.replaced))
        case .closed:
            // Abandoned while the copy was written.
            if let revision { keptAsideRevision = revision }
            return (true, [])
        case .unread, .reading, .clean, .dirty:
            illegal("replacedCopyFinished")
            return (false, [])
        }
    }

    /// What a request to close does.
    public enum CloseAction: Sendable, Equatable {
        /// Closed: nothing was unsaved.
        case closed
        /// Unsaved edits (or a save in flight): save, then ask again.
        case saveFirst
    }

    /// A client asks to close the buffer: it closes only with nothing unsaved.
    public mutating func closeRequested() -> (action: CloseAction, waiters: [Waiter]) {
        switch state {
        case .dirty, .displaced:
            return (.saveFirst, [])
        case .clean(let activity):
            if case .saving = activity.save { return (.saveFirst, []) }
            return (.closed, close(.requested))
        case .unread, .reading:
            return (.closed, close(.requested))
        case .closed:
            return (.closed, [])
        }
    }

    /// Its file was removed (or renamed away, or a link swapped in leads out of bounds) while it
    /// was clean.
    public mutating func removedWhileClean() -> [Waiter] {
        guard case .clean = state else {
            illegal("removedWhileClean")
            return []
        }
        return close(.removed)
    }

    /// The buffer is dropped as it is (shutdown after the flush, root gone, crash test).
    public mutating func abandoned() -> [Waiter] {
        close(.abandoned)
    }

    /// Enters `closed`, handing back every waiter the state held.
    private mutating func close(_ closing: Closing) -> [Waiter] {
        var waiters: [Waiter] = []
        switch state {
        case .reading(let loadWaiters, let activity): waiters = loadWaiters + activity.reconcileWaiters
        case .clean(let activity), .dirty(let activity), .displaced(let activity):
            if case .saving(_, _, let saveWaiters) = activity.save { waiters += saveWaiters }
            waiters += activity.reconcileWaiters
        case .unread: break
        case .closed: return []
        }
        state = .closed(closing)
        return waiters
    }

    private mutating func setActivity(_ activity: Activity) {
        switch state {
        case .clean: state = .clean(activity)
        case .dirty: state = .dirty(activity)
        case .displaced: state = .displaced(activity)
        case .reading(let waiters, _): state = .reading(waiters: waiters, activity: activity)
        case .unread, .closed: illegal("activity outside an open state")
        }
    }

    /// An event the state does not allow: a driver bug, never a silent no-op.
    private func illegal(_ event: String) {
        let message = "buffer event \(event) in state \(Self.name(of: state))"
        #if DEBUG
            preconditionFailure(message)
        #else
            reportIllegal(message)
        #endif
    }

    /// The state's name as the diagram and the log show it.
    public static func name(of state: State) -> String {
        switch state {
        case .unread: "unread"
        case .reading: "reading"
        case .clean: "clean"
        case .dirty: "dirty"
        case .displaced: "displaced"
        case .closed: "closed"
        }
    }
}
