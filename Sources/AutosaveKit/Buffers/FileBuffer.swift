import FoundationEssentials
import Logging

/// One open file: its unsaved edits, their autosave, and their reconciliation with the disk.
///
/// Holds `base` (the version last known on disk, with its fingerprint), `content` and a
/// `revision` that grows with every accepted edit. Edits are applied in arrival order, one at a
/// time; the actor never awaits in the middle of one. A save snapshots revision N and marks the
/// buffer clean only if nothing changed while it was written.
///
/// Its life (read, clean, dirty, saving, looking at the disk, displaced, closed) and everyone
/// waiting on it are one `BufferStateMachine`: the actor feeds it what happened and carries out
/// what it answers, and holds only data of its own (the text, its base, the autosave window).
public actor FileBuffer<C: Clock> where C.Duration == Duration {
    /// The path relative to the root; follows renames.
    public private(set) var path: String
    /// The last version known to be on disk; nil when the file does not exist.
    public internal(set) var base: DiskVersion? {
        get { storedBase }
        set {
            setBase(newValue)
            refreshDirty()
        }
    }
    private var storedBase: DiskVersion?
    /// `base` as a text that shares its chunks with `text` where they are the same: what makes
    /// `isDirty` cost O(log n) after an edit rather than a comparison of the whole file.
    private var knownBaseText: TextRope?
    /// Names this buffer's journal records, so the journal never strings one buffer's splices
    /// onto another's text (a rename can put two buffers at one path, one after the other).
    let journalSource = UUID()
    /// `ContentDigest` of `base`, worked out at most once per base: every journal record names
    /// its base, and a pass over a 10 MB file per keystroke would cost more than the edit.
    private var knownBaseDigest: UInt64?
    /// The version the buffer held until its file vanished (removed, or renamed with the news
    /// still on its way), while the buffer waits to write it again.
    var vanished: DiskVersion?
    /// Which file the buffer is about: the one on disk, or the one that just vanished; nil for a
    /// new name never saved.
    var fileIdentity: Fingerprint? { base?.fingerprint ?? vanished?.fingerprint }
    /// The buffer's text; nil when the buffer deletes its file.
    public internal(set) var text: TextRope? {
        didSet { refreshDirty() }
    }
    /// The buffer's bytes, in one copy of `text`; nil when the buffer deletes its file.
    public var content: [UInt8]? { text?.bytes }
    /// Grows with every accepted edit, reload and merge.
    public internal(set) var revision = 0 {
        didSet { if machine.isOpen { machine.contentChanged(revision: revision, isDirty: machine.isDirty) } }
    }
    /// The buffer's life: see `BufferStateMachine`.
    var machine: BufferStateMachine<CheckedContinuation<Void, Never>>
    /// True until the first read of the file completes.
    public var isLoading: Bool { machine.isLoading }
    /// Whether the buffer holds something the disk does not.
    public var isDirty: Bool { machine.isDirty }
    /// When the next autosave is due, if one is.
    public var pendingSave: C.Instant? { isDirty ? schedule.deadline : nil }
    /// Whether a save is being written right now.
    public var isSaving: Bool { machine.isSaving }
    /// Whether the buffer is closed (its file went away while clean, a client closed it, another
    /// file took its place, or the workspace dropped it); the workspace forgets it.
    public var isClosed: Bool { machine.isClosed }

    let context: BufferContext<C>
    var schedule: AutosaveSchedule<C.Instant>
    /// The deadline this buffer's one alarm in `context.alarms` serves; nil while none is armed.
    /// Moved when re-armed sooner, dropped when disarmed or the buffer closes.
    private var timerDeadline: C.Instant?
    /// Change ids already applied, with the revision they produced (bounded, oldest dropped).
    private var appliedChanges: [UUID: Int] = [:]
    private var appliedOrder: [UUID] = []
    /// Change ids the journal remembers for this path from before this buffer (an earlier run, or
    /// a buffer closed since): a retry of one applies nothing and answers the current revision.
    private var changesBeforeThisBuffer: Set<UUID> = []
    /// The revision last copied aside because its file had nowhere to land, and the copy.
    var copiedAside: (revision: Int, copy: String)?
    /// The side that keeps the path when this buffer's edits and the disk's overlap, as a client
    /// asked at `open` (an editor showing the buffer keeps its text); nil: `conflicts.keep`.
    var conflictSide: ConflictSide?

    static var rememberedChangeIDs: Int { 4096 }

    init(path: String, context: BufferContext<C>) {
        self.path = path
        self.context = context
        self.schedule = AutosaveSchedule(
            delay: .milliseconds(context.configuration.autosave.delayMs),
            maxDelay: .milliseconds(context.configuration.autosave.maxDelayMs))
        let logger = context.logger
        self.machine = BufferStateMachine { message in
            logger.error("internal-error", metadata: ["path": "\(path)", "error": "\(message)", "next": "the event is ignored; please report this"])
        }
    }

    /// Returns once the file has been read into the buffer; edits wait for it, so none is
    /// overwritten by a read that finishes after it. Callers that arrive during the read wait
    /// for it; when it fails, each of them reads again.
    ///
    /// - Throws: `WorkspaceError.unreadable` (too large, not a regular file, I/O error),
    ///   `.pathRefused` when the path leads out of bounds.
    func ensureLoaded() async throws(WorkspaceError) {
        while true {
            switch machine.loadRequested() {
            case .ready:
                return
            case .wait:
                await withCheckedContinuation { waiter in
                    if machine.waitForLoad(waiter) == .resumeNow { waiter.resume() }
                }
            case .read:
                do { try await load() } catch {
                    resume(machine.loadFailed())
                    throw error
                }
                let (waiters, mustReconcile) = machine.loaded(revision: revision, isDirty: computeIsDirty())
                resume(waiters)
                // A change of the file reported while it was read, which the read may have missed.
                if mustReconcile { await takeInDisk() }
                return
            }
        }
    }

    /// Reads the file into the buffer; a missing file gives a buffer with no content, for a new file.
    private func load() async throws(WorkspaceError) {
        let version: DiskVersion?
        do { version = try await readDisk() } catch {
            if case .refused(let refusal) = error { throw .pathRefused(refusal) }
            throw .unreadable(error)
        }
        if let journal = context.journal { changesBeforeThisBuffer = Set(await journal.changeIDs(of: path)) }
        // A file that does not exist yet stays absent (nil) until a client writes it.
        text = version.map { TextRope($0.bytes) }
        adoptBase(version, text: text)
        if let version { context.history?.read(path, bytes: version.bytes) }
    }

    /// Hands waiters back, once each (the machine gave them up).
    func resume(_ waiters: [CheckedContinuation<Void, Never>]) {
        for waiter in waiters { waiter.resume() }
    }

    // MARK: - Edits

    /// Reads the buffer's file off the cooperative pool; nil when it does not exist.
    ///
    /// - Throws: `DiskVersion.ReadError.refused` when the path now leads out of bounds (a link
    ///   swapped in): the file is never read through it.
    func readDisk() async throws(DiskVersion.ReadError) -> DiskVersion? {
        let path = self.path
        let resolver = context.writer.resolver
        let limit = context.configuration.limits.maxFileBytes
        return try await BlockingIO.run { () throws(DiskVersion.ReadError) -> DiskVersion? in
            try DiskVersion.read(path, resolver: resolver, limit: limit)
        }
    }

    /// An accepted edit: its revision, and the journal record that makes it survive a crash
    /// (nil when the same change id was already applied, and so already journaled).
    struct Accepted: Sendable {
        var revision: Int
        var record: JournalRecord?
    }

    /// Replaces the content. The same `changeID` applied twice is applied once.
    ///
    /// - Returns: the revision the edit produced (or produced the first time).
    /// - Throws: `WorkspaceError.staleRevision` when `ifRevision` is not the current revision,
    ///   `.tooLarge` over `limits.maxFileBytes`.
    func write(_ bytes: [UInt8], changeID: UUID?, ifRevision: Int?) throws(WorkspaceError) -> Accepted {
        try write(TextRope(bytes), changeID: changeID, ifRevision: ifRevision)
    }

    /// Replaces the content with `text`, as `write` does with bytes.
    func write(_ text: TextRope, changeID: UUID?, ifRevision: Int?) throws(WorkspaceError) -> Accepted {
        if let done = try earlierApplication(of: changeID, ifRevision: ifRevision) { return done }
        let limit = context.configuration.limits.maxFileBytes
        guard text.count <= limit else { throw .tooLarge(path: path, size: text.count, limit: limit) }
        accept(text, changeID: changeID)
        return Accepted(revision: revision, record: journalRecord(changeID: changeID))
    }

    /// Deletes the file, after every edit queued before it.
    func delete(changeID: UUID?, ifRevision: Int?) throws(WorkspaceError) -> Accepted {
        if let done = try earlierApplication(of: changeID, ifRevision: ifRevision) { return done }
        accept(nil, changeID: changeID)
        return Accepted(revision: revision, record: journalRecord(changeID: changeID))
    }

    /// What an edit with `changeID` produced when it was applied before (nil: it was not, go on).
    ///
    /// - Throws: `WorkspaceError.staleRevision` when `ifRevision` is not the current revision.
    func earlierApplication(of changeID: UUID?, ifRevision: Int?) throws(WorkspaceError) -> Accepted? {
        // A request that raced the buffer's close would be taken by no one: it goes to no file.
        guard machine.editRequested() == .accept else { throw .notOpen(path: path) }
        if let changeID, let done = appliedChanges[changeID] { return Accepted(revision: done) }
        if let changeID, changesBeforeThisBuffer.contains(changeID) { return Accepted(revision: revision) }
        if let ifRevision, ifRevision != revision {
            throw .staleRevision(path: path, expected: ifRevision, current: revision)
        }
        return nil
    }

    /// `ContentDigest` of `base` (nil when there is none), from the cache when it holds it.
    func baseDigest() -> UInt64? {
        guard let base else { return nil }
        if let known = knownBaseDigest { return known }
        let digest = ContentDigest.of(base.bytes)
        knownBaseDigest = digest
        return digest
    }

    /// The buffer's current state as a journal record (content and the base it was made on).
    func journalRecord(changeID: UUID? = nil) -> JournalRecord {
        var record = JournalRecord(
            kind: text == nil ? .delete : .write, path: path, revision: revision, changeID: changeID,
            text: text ?? TextRope(), baseDigest: baseDigest())
        record.source = journalSource
        return record
    }

    /// Makes `text` the content (nil: the buffer deletes its file) at the next revision.
    func accept(_ text: TextRope?, changeID: UUID?) {
        self.text = text
        revision += 1
        if let changeID {
            appliedChanges[changeID] = revision
            appliedOrder.append(changeID)
            if appliedOrder.count > Self.rememberedChangeIDs {
                appliedChanges[appliedOrder.removeFirst()] = nil
            }
        }
        contentChanged()
    }

    /// Makes `version` the base, `text` being its bytes as a rope (shared with the buffer's text
    /// where it can be, so that `isDirty` stays cheap), and `digest` their `ContentDigest` when
    /// it is known already (a save worked it out: the next edit's record need not).
    func adoptBase(_ version: DiskVersion?, text baseText: TextRope?, digest: UInt64? = nil) {
        setBase(version)
        knownBaseText = version == nil ? nil : baseText
        knownBaseDigest = version == nil ? nil : digest
        refreshDirty()
    }

    /// Makes `version` the base, forgetting what was worked out of the last one.
    private func setBase(_ version: DiskVersion?) {
        storedBase = version
        if version != nil { vanished = nil }
        knownBaseDigest = nil
        knownBaseText = nil
    }

    /// Tells the machine whether the buffer is dirty after `text` or `base` changed. Before the
    /// first read is done `loaded` tells it; after a close nothing does: a save or a read that
    /// was in flight when the buffer was dropped ends into a buffer no one reaches.
    private func refreshDirty() {
        guard machine.isOpen else { return }
        machine.contentChanged(revision: revision, isDirty: computeIsDirty())
    }

    /// Whether the text differs from `base`.
    private func computeIsDirty() -> Bool {
        guard let base else { return text != nil }
        guard let text, text.count == base.bytes.count else { return true }
        if knownBaseText == nil { knownBaseText = TextRope(base.bytes) }
        return text != knownBaseText
    }

    /// After any change of `content` or `base`: open, push or close the autosave window.
    func contentChanged() {
        if isDirty {
            schedule.edited(at: context.clock.now)
        } else {
            schedule.cleaned()
        }
        rescheduleTimer()
    }

    /// Follows a rename of the file inside the root. A buffer waiting to write back its vanished
    /// file has found it: it waits no more, and its edits are again edits of that file.
    ///
    /// A rename is the kernel's word that the file at `newPath` is the one that vanished: the same
    /// inode is enough, even written since (its version then merges in, as any outside change).
    func move(to newPath: String) {
        path = newPath
        if base == nil, let vanished, let there = Fingerprint.of(context.absolute(newPath)),
            there.device == vanished.fingerprint.device, there.inode == vanished.fingerprint.inode
        {
            base = vanished
            schedule.cleaned()
            contentChanged()
        }
    }

    // MARK: - The autosave timer

    func rescheduleTimer() {
        let deadline = machine.wantsTimer ? schedule.deadline : nil
        if deadline == nil, timerDeadline == nil { return }
        // Typing moves the deadline later with every edit: the armed alarm stays and is set again
        // when it fires, so a window costs one or two wake-ups, not one per edit.
        if let deadline, let current = timerDeadline, current <= deadline { return }
        guard let deadline else { return cancelTimer() }
        arm(for: deadline, at: TimerWakeUp.alarm(for: deadline))
    }

    /// Sets this buffer's one alarm; it serves `deadline` (checked when it fires: an alarm moved
    /// or dropped meanwhile is not this one).
    private func arm(for deadline: C.Instant, at instant: C.Instant) {
        timerDeadline = deadline
        context.alarms.arm(ObjectIdentifier(self), at: instant) { [weak self] in await self?.timerFired(for: deadline) }
    }

    private func timerFired(for deadline: C.Instant) async {
        guard timerDeadline == deadline else { return }
        timerDeadline = nil
        guard machine.isDirty, !machine.isSaving else { return }
        if machine.isDisplaced {
            await closeReplaced()
            return
        }
        if let due = schedule.deadline, !TimerWakeUp.isDue(due, at: context.clock.now) {
            rescheduleTimer()
            return
        }
        if context.gitPause.mustWait() {
            // The same one alarm, polling while git holds its lock.
            let poll = context.clock.now.advanced(by: GitPause.pollInterval)
            arm(for: poll, at: poll)
            return
        }
        // An autosave lets a writer that holds the file open finish first, as long as the
        // window's cap allows; then it writes in place.
        let isOverdue = schedule.firstUnsavedEdit.map { TimerWakeUp.isDue($0.advanced(by: schedule.maxDelay), at: context.clock.now) } ?? true
        await performSave(heldOpen: isOverdue ? .writeInPlace : .wait)
    }

    /// Stops the timer (the workspace is closing the buffer).
    func cancelTimer() {
        guard timerDeadline != nil else { return }
        timerDeadline = nil
        context.alarms.disarm(ObjectIdentifier(self))
    }

    /// Whole milliseconds from now until `instant`, for a log line's "retrying in".
    func millisecondsUntil(_ instant: C.Instant) -> Int {
        let wait = context.clock.now.duration(to: instant)
        return Int(wait.wholeMilliseconds)
    }

    /// Drops the buffer as it is: the agent stops (after its flush), its root is gone, or a test
    /// simulates a crash. Unsaved edits stay in the journal only (and in `content`, for the
    /// caller to keep elsewhere).
    ///
    /// - Returns: whether it held unsaved edits.
    @discardableResult
    func abandon() -> Bool {
        let wasDirty = machine.isDirty
        didClose(machine.abandoned())
        return wasDirty
    }

    /// Closes the buffer for a client, saving its unsaved edits first: it closes only once
    /// nothing is unsaved, with no await between the last look and the close, so an edit that
    /// arrives meanwhile is saved too, or refused (`notOpen`) once closed.
    ///
    /// - Throws: `WorkspaceError.saveFailed` when a save fails; the buffer then stays open.
    func close() async throws(WorkspaceError) {
        while true {
            let (action, waiters) = machine.closeRequested()
            switch action {
            case .closed:
                didClose(waiters)
                return
            case .saveFirst:
                try await save()
            }
        }
    }

    /// Closes a buffer a request opened and left clean (nothing to keep).
    ///
    /// - Returns: whether it closed; false when it holds unsaved edits.
    func closeIfClean() -> Bool {
        // Unsaved edits, or a save in flight, answer `.saveFirst`: the buffer stays as it is.
        let (action, waiters) = machine.closeRequested()
        didClose(waiters)
        return action == .closed
    }

    /// After the machine entered `closed`: the timer stops and every waiter goes.
    func didClose(_ waiters: [CheckedContinuation<Void, Never>]) {
        cancelTimer()
        resume(waiters)
    }
}
