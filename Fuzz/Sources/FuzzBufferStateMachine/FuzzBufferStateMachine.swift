// libFuzzer target: random lives of one buffer, driven through `BufferStateMachine` the way a
// correct `FileBuffer` drives it, with the machine's promises checked after every event. Build
// and run with `Fuzz/run [SECONDS]`; seeds are in Fuzz/Seeds/FuzzBufferStateMachine/.
//
// The input's bytes pick events one at a time, but only events the driver could send in the
// state it is in (`Driver.isLegal`): a load, a save, a look at the disk or a conflict copy
// completes only after the machine asked for it, `removedWhileClean` only while clean, no
// `contentChanged` once closed. Its waiters are fresh integers. The driver keeps its own model
// (what it started and has not heard back from, whether its text is dirty), built from the
// machine's answers, and checks, with fatalError naming the broken promise:
// (a) an accepted revision is never dropped: the buffer closes (other than `.abandoned`) clean,
//     or with `keptAsideRevision == revision` (or `.replaced` while its unsaved edit is a pending
//     delete: another file took the name, and there is no text to keep);
// (b) a save never starts while a change of the disk is reported and not yet taken in;
// (c) every suspended waiter is handed back exactly once, by an event that can end its wait (a
//     waiter for the disk only once no look at it is under way or due), none is left waiting for
//     something nothing will finish, and none is left in `closed`;
// (d) `closed` is terminal, with the reason it closed for;
// and that the machine's own view (state, revision, saving) agrees with its driver's. An event
// the machine calls illegal is a finding too: the fuzz build is a release build, where the
// machine calls `reportIllegal`, and that fails.
//
// A failure runs the input again printing every event and answer before it stops, so the log
// (Fuzz/.build/findings/FuzzBufferStateMachine/libfuzzer.log) holds the sequence;
// `FUZZ_BSM_TRACE=1 Fuzz/.build/release/FuzzBufferStateMachine FILE` prints it for any input.
//
// A read, a save, a look at the disk, a conflict copy or a displaced buffer's copy that ends
// after the buffer closed is reported all the same (the machine takes those). A displaced buffer
// stays displaced whatever its text, so its copy never ends in another state.
import AutosaveKit
import Glibc

typealias Machine = BufferStateMachine<Int>

// MARK: - Failing with the sequence

/// The input being run, to run it again with the trace on when a check fails.
nonisolated(unsafe) private var currentInput = UnsafeBufferPointer<UInt8>(start: nil, count: 0)
/// Whether each event is printed: in the run again after a failure, or always with
/// `FUZZ_BSM_TRACE=1` (to read what a seed or a kept input does).
nonisolated(unsafe) private var isTracing = getenv("FUZZ_BSM_TRACE") != nil
nonisolated(unsafe) private var isRunAgain = false

/// A broken promise: runs the input again printing each event (which fails at the same place),
/// then stops.
private func fail(_ message: String) -> Never {
    if !isRunAgain {
        isRunAgain = true
        isTracing = true
        trace("FuzzBufferStateMachine: \(message); the input again, event by event:")
        _ = fuzzBufferStateMachine(currentInput)
        fatalError("FuzzBufferStateMachine: \(message) (the second run did not fail: not deterministic?)")
    }
    fatalError("FuzzBufferStateMachine: \(message)")
}

private func trace(_ line: @autoclosure () -> String) {
    guard isTracing else { return }
    // Straight to standard error: the fatalError that follows flushes no buffer.
    let text = line() + "\n"
    _ = text.withCString { write(2, $0, strlen($0)) }
}

// MARK: - Input

/// Reads the fuzz input one byte at a time.
private struct InputReader {
    var bytes: UnsafeBufferPointer<UInt8>
    var offset = 0
    var isAtEnd: Bool { offset >= bytes.count }
    mutating func next() -> Int {
        defer { offset += 1 }
        return offset < bytes.count ? Int(bytes[offset]) : 0
    }
    mutating func flag() -> Bool { next() & 1 == 1 }
}

/// What the driver does next: a machine event, or (`conflictCopyStarted`) the start of a
/// conflict copy whose end is `keptAside`.
private enum Kind: Int, CaseIterable {
    case loadRequested, waitForLoad, loaded, loadFailed, contentChanged, saveRequested, waitForSave, saveFinished,
        diskChanged, reconcileFinished, waitUntilReconciled, conflictCopyStarted, keptAside, replaced,
        replacedCopyFinished, closeRequested, removedWhileClean, abandoned
}

private enum WaitKind { case load, save, reconcile }

private enum Phase { case unread, reading, open, closed }

// MARK: - The driver

/// A correct driver of one buffer: the machine, and what the driver knows from its answers.
private struct Driver {
    var machine = Machine(reportIllegal: { fail("illegal event in a legal sequence: \($0)") })

    var phase = Phase.unread
    /// The revision the driver last reported, and whether its text differs from the disk.
    var revision = 0
    var isDirty = false
    /// The dirty text is a pending delete (nothing to keep in a copy when the file is replaced).
    var isPendingDelete = false
    /// Another file was renamed over the buffer's while dirty (`replaced` answered `.copyAside`).
    var isDisplaced = false
    /// `loadRequested` answered `.read`; neither `loaded` nor `loadFailed` reported yet.
    var isLoadInFlight = false
    /// `saveRequested` answered `.start(revision)`; `saveFinished` not reported yet.
    var saveInFlight: Int?
    /// `diskChanged` answered `.read` this many times more than `reconcileFinished` was reported.
    var reconcilesInFlight = 0
    /// `diskChanged` answered `.afterSave`, and the save in flight has not finished.
    var isDiskChangedDuringSave = false
    /// `diskChanged` answered `.afterLoad`, and the read under way has not finished.
    var isDiskChangedDuringLoad = false
    /// `saveRequested` answered `.waitForReconcile`: the autosave is due once the disk is taken in.
    var isSaveDueAfterReconcile = false
    /// Conflict copies of a displaced buffer being written (the revisions they hold).
    var replacedCopies: [Int] = []
    /// Conflict copies of a reconcile being written (the revisions they hold).
    var conflictCopies: [Int] = []
    var nextWaiter = 0
    var suspended: [Int: WaitKind] = [:]
    var closedAs: Machine.Closing?
    var step = 0

    // MARK: Which events a correct driver can send now

    func isLegal(_ kind: Kind) -> Bool {
        switch kind {
        case .loadRequested, .waitForLoad, .saveRequested, .waitForSave, .diskChanged, .waitUntilReconciled, .replaced,
            .closeRequested, .abandoned:
            true
        case .loaded, .loadFailed: isLoadInFlight
        case .contentChanged: phase == .open || phase == .reading
        case .saveFinished: saveInFlight != nil
        case .reconcileFinished: reconcilesInFlight > 0
        case .conflictCopyStarted: phase == .open && conflictCopies.count < 3
        case .keptAside: !conflictCopies.isEmpty
        case .replacedCopyFinished: !replacedCopies.isEmpty
        case .removedWhileClean: phase == .open && !isDirty && !isDisplaced
        }
    }

    /// Whether nothing the driver started is still to complete.
    var isQuiet: Bool {
        !isLoadInFlight && saveInFlight == nil && reconcilesInFlight == 0 && replacedCopies.isEmpty && conflictCopies.isEmpty
    }

    var state: String { Machine.name(of: machine.state) }

    mutating func freshWaiter() -> Int {
        nextWaiter += 1
        return nextWaiter
    }

    // MARK: Events

    mutating func perform(_ kind: Kind, _ input: inout InputReader) {
        step += 1
        let before = state
        let wasDirty = isDirty
        let wasPendingDelete = isPendingDelete
        switch kind {
        case .loadRequested: loadRequested()
        case .waitForLoad: wait(.load)
        case .loaded:
            // The read sets the revision (a journal's recovered edits may make it dirty). One that
            // ends after the buffer closed is reported all the same.
            isLoadInFlight = false
            let revision = self.revision + input.next() % 2
            let dirty = input.flag()
            calling("loaded(revision: \(revision), isDirty: \(dirty))")
            let (waiters, mustReconcile) = machine.loaded(revision: revision, isDirty: dirty)
            answer("waiters \(waiters), mustReconcile \(mustReconcile)")
            handBack(waiters, by: "loaded", ending: [.load])
            if isDiskChangedDuringLoad, !mustReconcile, phase == .reading {
                fail("(b) a change of the disk during the read is lost: loaded without mustReconcile")
            }
            isDiskChangedDuringLoad = false
            guard phase == .reading else {
                if mustReconcile { fail("loaded asked a closed buffer to look at the disk") }
                break
            }
            phase = .open
            self.revision = revision
            (isDirty, isPendingDelete) = (dirty, false)
            // In the same turn: the look at the disk the read may have missed.
            if mustReconcile { reconcilesInFlight += 1 }
        case .loadFailed:
            // One that ends after the buffer closed is reported all the same.
            isLoadInFlight = false
            calling("loadFailed()")
            let waiters = machine.loadFailed()
            answer("waiters \(waiters)")
            // A change of the disk during the read is in whatever the next read finds.
            handBack(waiters, by: "loadFailed", ending: [.load, .reconcile])
            isDiskChangedDuringLoad = false
            if phase == .reading { phase = .unread }
        case .contentChanged:
            // While reading, only the read's own text (not dirty); once open, an edit, a reload or a merge.
            let dirty = phase == .open && input.flag()
            contentChanged(revision: revision + 1, isDirty: dirty, isDelete: dirty && input.next() % 4 == 0)
        case .saveRequested: saveRequested(byCaller: input.flag())
        case .waitForSave: wait(.save)
        case .saveFinished: saveFinished(&input)
        case .diskChanged: diskChanged()
        case .reconcileFinished:
            let wasOpen = phase == .open
            reconcilesInFlight -= 1
            calling("reconcileFinished()")
            let finished = machine.reconcileFinished()
            answer("waiters \(finished.waiters), mustRearm \(finished.mustRearm)")
            if !finished.waiters.isEmpty, reconcilesInFlight > 0 || isDiskChangedDuringSave {
                fail("(c) reconcileFinished handed back \(finished.waiters) while the disk is still being looked at: a sync would return early")
            }
            handBack(finished.waiters, by: "reconcileFinished", ending: [.reconcile])
            if reconcilesInFlight == 0 {
                if wasOpen, isSaveDueAfterReconcile, !finished.mustRearm {
                    fail("the autosave that waited for the disk is lost: the last reconcileFinished did not ask to rearm")
                }
                isSaveDueAfterReconcile = false
            }
        case .waitUntilReconciled: wait(.reconcile)
        case .conflictCopyStarted:
            conflictCopies.append(revision)
            note("(a conflict copy of revision \(revision) is being written)")
        case .keptAside:
            let copied = conflictCopies.remove(at: input.next() % conflictCopies.count)
            calling("keptAside(revision: \(copied))")
            machine.keptAside(revision: copied)
        case .replaced: replaced()
        case .replacedCopyFinished: replacedCopyFinished(&input)
        case .closeRequested:
            calling("closeRequested()")
            let (action, waiters) = machine.closeRequested()
            answer("\(action), waiters \(waiters)")
            if action == .closed { enterClosed(by: "closeRequested") }
            handBack(waiters, by: "closeRequested", ending: [.load, .save, .reconcile])
        case .removedWhileClean:
            calling("removedWhileClean()")
            let waiters = machine.removedWhileClean()
            answer("waiters \(waiters)")
            enterClosed(by: "removedWhileClean")
            handBack(waiters, by: "removedWhileClean", ending: [.load, .save, .reconcile])
        case .abandoned:
            calling("abandoned()")
            let waiters = machine.abandoned()
            answer("waiters \(waiters)")
            enterClosed(by: "abandoned")
            handBack(waiters, by: "abandoned", ending: [.load, .save, .reconcile])
        }
        check(before: before, wasDirty: wasDirty, wasPendingDelete: wasPendingDelete)
    }

    mutating func loadRequested() {
        calling("loadRequested()")
        let action = machine.loadRequested()
        answer("\(action)")
        switch action {
        case .read:
            if isLoadInFlight { fail("loadRequested answered .read while a read is under way") }
            if phase != .unread { fail("loadRequested answered .read in phase \(phase)") }
            isLoadInFlight = true
            phase = .reading
        case .wait:
            // The caller waits for the read under way, in the same turn.
            if wait(.load) != .suspend { fail("loadRequested answered .wait, then waitForLoad did not keep the waiter") }
        case .ready:
            if phase == .unread || phase == .reading { fail("loadRequested answered .ready before the buffer was read") }
        }
    }

    @discardableResult
    mutating func wait(_ kind: WaitKind) -> Machine.WaitAction {
        let waiter = freshWaiter()
        let action: Machine.WaitAction
        calling("\(kind == .load ? "waitForLoad" : kind == .save ? "waitForSave" : "waitUntilReconciled")(\(waiter))")
        switch kind {
        case .load: action = machine.waitForLoad(waiter)
        case .save: action = machine.waitForSave(waiter)
        case .reconcile: action = machine.waitUntilReconciled(waiter)
        }
        answer("\(action)")
        if action == .suspend { suspended[waiter] = kind }
        return action
    }

    mutating func contentChanged(revision: Int, isDirty dirty: Bool, isDelete: Bool) {
        calling("contentChanged(revision: \(revision), isDirty: \(dirty))\(isDelete ? " (a delete)" : "")")
        machine.contentChanged(revision: revision, isDirty: dirty)
        self.revision = revision
        (isDirty, isPendingDelete) = (dirty, isDelete)
    }

    /// `byCaller`: a client's `save()`, which waits; else the timer's, which does not.
    mutating func saveRequested(byCaller: Bool) {
        calling("saveRequested()\(byCaller ? " (a caller's)" : " (the timer's)")")
        let action = machine.saveRequested()
        answer("\(action)")
        switch action {
        case .start(let started):
            if reconcilesInFlight > 0 {
                fail("(b) a save started while \(reconcilesInFlight) look(s) at the disk are under way")
            }
            if isDiskChangedDuringSave { fail("(b) a save started while a change of the disk waits for the last save") }
            if let saveInFlight { fail("a save of \(started) started while the save of \(saveInFlight) is in flight") }
            if phase != .open || !isDirty || isDisplaced { fail("a save started in phase \(phase), dirty \(isDirty), displaced \(isDisplaced)") }
            if started != revision { fail("a save started with revision \(started); the buffer is at \(revision)") }
            saveInFlight = started
        case .waitForSave:
            if saveInFlight == nil { fail("saveRequested answered .waitForSave with no save in flight") }
            if byCaller, wait(.save) != .suspend { fail("saveRequested answered .waitForSave, then waitForSave did not keep the waiter") }
        case .waitForReconcile:
            if reconcilesInFlight == 0 { fail("saveRequested answered .waitForReconcile with no look at the disk under way") }
            isSaveDueAfterReconcile = true
            if byCaller, wait(.reconcile) != .suspend {
                fail("saveRequested answered .waitForReconcile, then waitUntilReconciled did not keep the waiter")
            }
        case .nothingToSave:
            if phase == .open, isDirty, !isDisplaced { fail("a dirty buffer answered .nothingToSave: its edits would never be saved") }
        case .copyAside:
            if !isDisplaced || phase != .open { fail("saveRequested answered .copyAside to a buffer that is not displaced") }
            if replacedCopies.count < 3 { replacedCopies.append(revision) }
        }
    }

    mutating func saveFinished(_ input: inout InputReader) {
        // One that ends after the buffer closed is reported all the same.
        guard let started = saveInFlight else { return }
        let outcome: Machine.SaveOutcome =
            switch input.next() % 4 {
            case 0: .saved(revision: started)
            case 1: .heldOpen
            case 2: .changedOnDisk
            default: .failed
            }
        let diskChanged = isDiskChangedDuringSave || outcome == .changedOnDisk
        saveInFlight = nil
        isDiskChangedDuringSave = false
        calling("saveFinished(\(outcome))")
        let finished = machine.saveFinished(outcome)
        answer("waiters \(finished.waiters), mustReconcile \(finished.mustReconcile)")
        handBack(finished.waiters, by: "saveFinished", ending: [.save])
        if diskChanged, !finished.mustReconcile, phase != .closed {
            fail("(b) a change of the disk is lost: the save ended without mustReconcile")
        }
        if finished.mustReconcile, phase == .closed { fail("saveFinished asked a closed buffer to look at the disk") }
        // In the same turn: the save's new base, then the look at the disk it asked for.
        if case .saved(let saved) = outcome, phase == .open {
            if saved == revision {
                contentChanged(revision: revision, isDirty: false, isDelete: false)
            } else {
                // Edited during the save: dirty, unless taken back to what was just written.
                let dirty = input.next() % 4 != 0
                contentChanged(revision: revision, isDirty: dirty, isDelete: dirty && isPendingDelete)
            }
        }
        // The machine counts that look as under way from now: the driver reads the disk and
        // reports reconcileFinished.
        if finished.mustReconcile { reconcilesInFlight += 1 }
    }

    mutating func diskChanged() {
        calling("diskChanged()")
        let action = machine.diskChanged()
        answer("\(action)")
        switch action {
        case .read:
            if saveInFlight != nil { fail("diskChanged answered .read during a save (a look at the disk waits for the save)") }
            if phase != .open { fail("diskChanged answered .read in phase \(phase)") }
            reconcilesInFlight += 1
        case .afterSave:
            if saveInFlight == nil || phase != .open { fail("diskChanged answered .afterSave with no save in flight") }
            isDiskChangedDuringSave = true
        case .afterLoad:
            if !isLoadInFlight || phase != .reading { fail("diskChanged answered .afterLoad with no read under way") }
            isDiskChangedDuringLoad = true
        case .ignore:
            if phase == .open && !isDisplaced || phase == .reading {
                fail("a buffer open (not displaced) or being read ignored a change of its disk")
            }
        }
    }

    mutating func replaced() {
        let hasEditsToKeep = phase == .open && isDirty && !isPendingDelete
        calling("replaced(hasEditsToKeep: \(hasEditsToKeep))")
        let (action, waiters) = machine.replaced(hasEditsToKeep: hasEditsToKeep)
        answer("\(action), waiters \(waiters)")
        switch action {
        case .copyAside:
            if !hasEditsToKeep { fail("replaced answered .copyAside with nothing to keep") }
            isDisplaced = true
            if replacedCopies.count < 3 { replacedCopies.append(revision) }
        case .closed:
            enterClosed(by: "replaced")
        }
        handBack(waiters, by: "replaced", ending: [.load, .save, .reconcile])
    }

    mutating func replacedCopyFinished(_ input: inout InputReader) {
        let revision = replacedCopies.remove(at: input.next() % replacedCopies.count)
        let copied = input.next() % 3 == 0 ? nil : revision
        calling("replacedCopyFinished(copied: \(copied.map(String.init) ?? "nil"))")
        let (isClosed, waiters) = machine.replacedCopyFinished(copied: copied)
        answer("isClosed \(isClosed), waiters \(waiters)")
        if isClosed { enterClosed(by: "replacedCopyFinished") }
        handBack(waiters, by: "replacedCopyFinished", ending: [.load, .save, .reconcile])
    }

    // MARK: Bookkeeping

    mutating func enterClosed(by event: String) {
        guard case .closed(let closing) = machine.state else { fail("\(event) said the buffer closed; it is \(state)") }
        if closedAs == nil { closedAs = closing }
        phase = .closed
        isDisplaced = false
    }

    /// Takes back `waiters` from `event`, which can end the waits of `ending`.
    mutating func handBack(_ waiters: [Int], by event: String, ending: Set<WaitKind>) {
        for waiter in waiters {
            guard let kind = suspended.removeValue(forKey: waiter) else {
                fail("(c) \(event) handed back waiter \(waiter), which is not waiting (never suspended, or handed back before)")
            }
            if !ending.contains(kind) { fail("(c) \(event) handed back waiter \(waiter), which waits for the \(kind)") }
        }
    }

    /// Traces what the driver does without the machine.
    func note(_ line: @autoclosure () -> String) {
        trace("  \(step). [\(state)] \(line())")
    }

    /// Traces an event before it is sent (an illegal one stops in it).
    func calling(_ event: @autoclosure () -> String) {
        trace("  \(step). [\(state)] \(event())")
    }

    /// Traces the machine's answer and the state it left.
    func answer(_ line: @autoclosure () -> String) {
        trace("       -> \(line()) [\(state)]")
    }

    /// The checks after every step.
    func check(before: String, wasDirty: Bool, wasPendingDelete: Bool) {
        // (d) closed is terminal, with its reason.
        if let closedAs {
            guard case .closed(let closing) = machine.state, machine.isClosed else {
                fail("(d) the buffer closed (\(closedAs)) came back as \(state)")
            }
            if closing != closedAs { fail("(d) the buffer closed as \(closedAs) now says \(closing)") }
            if !suspended.isEmpty { fail("(c) closed with waiters still suspended: \(suspended.keys.sorted())") }
            // (a) an accepted revision is never dropped.
            if before != "closed", closedAs != .abandoned, wasDirty, machine.keptAsideRevision != machine.revision,
                !(closedAs == .replaced && wasPendingDelete)
            {
                fail(
                    "(a) closed (\(closedAs)) from \(before) with revision \(machine.revision) unsaved; kept aside: \(machine.keptAsideRevision.map(String.init) ?? "none")"
                )
            }
        } else if machine.isClosed {
            fail("the buffer closed (\(state)) though no event said so")
        }
        // (c) no waiter waits for something nothing will finish.
        for (waiter, kind) in suspended {
            let isAlive =
                switch kind {
                case .load: isLoadInFlight && phase == .reading
                case .save: saveInFlight != nil && phase == .open
                case .reconcile:
                    (phase == .open && (reconcilesInFlight > 0 || isDiskChangedDuringSave))
                        || (phase == .reading && isDiskChangedDuringLoad)
                }
            if !isAlive { fail("(c) waiter \(waiter) waits for the \(kind) with none under way: it would never be handed back") }
        }
        // The machine's view agrees with its driver's.
        let expected =
            switch phase {
            case .unread: "unread"
            case .reading: "reading"
            case .open: isDisplaced ? "displaced" : isDirty ? "dirty" : "clean"
            case .closed: "closed"
            }
        if state != expected { fail("the machine is \(state); its driver expects \(expected)") }
        if machine.revision != revision { fail("the machine is at revision \(machine.revision); its driver at \(revision)") }
        if phase == .open, machine.isSaving != (saveInFlight != nil) {
            fail("the machine says saving \(machine.isSaving); its driver \(saveInFlight != nil)")
        }
    }
}

// MARK: - Entry

/// One fuzz input: a life of one buffer.
func fuzzBufferStateMachine(_ input: UnsafeBufferPointer<UInt8>) -> CInt {
    currentInput = input
    var reader = InputReader(bytes: input)
    var driver = Driver()
    var afterClose = 0
    while !reader.isAtEnd, driver.step < 2048 {
        // A closed buffer still hears what was under way, and a few late events.
        if driver.phase == .closed {
            if driver.isQuiet, afterClose >= 6 { break }
            afterClose += 1
        }
        let pick = reader.next()
        let kinds = Kind.allCases
        // The picked event, else the next legal one after it.
        guard let kind = (0..<kinds.count).lazy.map({ kinds[(pick + $0) % kinds.count] }).first(where: driver.isLegal) else { break }
        driver.perform(kind, &reader)
    }
    if isRunAgain { fatalError("FuzzBufferStateMachine: the run again did not fail (not deterministic?)") }
    return 0
}
