import Logging

extension FileBuffer {
    /// Brings the buffer in line with its file after someone else changed it.
    ///
    /// Clean: reload. Dirty: merge line by line, or keep both versions when the edits overlap.
    /// Removed while dirty: write it again. Removed while clean: close. A change that lands
    /// during a save is looked at once that save is done, and one that lands during the first
    /// read once that read is done.
    func reconcileWithDisk() async {
        guard machine.diskChanged() == .read else { return }
        await takeInDisk()
    }

    /// Reads the disk and takes in what changed: the look the machine counts as under way
    /// (`diskChanged` answered `.read`, or a save or the first read found it due).
    func takeInDisk() async {
        defer {
            let finished = machine.reconcileFinished()
            resume(finished.waiters)
            if finished.mustRearm { rescheduleTimer() }
        }
        let disk: DiskVersion?
        do { disk = try await readDisk() } catch {
            if case .refused(let refusal) = error {
                // A link swapped in leads out of bounds: never read through, as if the file were gone.
                context.logger.warning(
                    "path-refused",
                    metadata: [
                        "path": "\(path)", "error": "\(refusal)",
                        "next": isDirty
                            ? "treated as removed: the unsaved edits stay in the buffer and go to a conflict copy while the path leads there"
                            : "treated as removed: the buffer closes without reading it",
                    ])
                await apply(nil)
                return
            }
            guard isDirty else {
                context.logger.warning(
                    "reconcile-failed",
                    metadata: ["path": "\(path)", "error": "\(error)", "next": "the buffer keeps its content and is not saved over the file"])
                return
            }
            // Unsaved edits must land once the path is usable again (its directory back, say):
            // try again with the save backoff; the retry's compare-and-swap brings it back here.
            let retry = schedule.saveFailed(at: context.clock.now)
            let wait = context.clock.now.duration(to: retry)
            context.logger.warning(
                "reconcile-failed",
                metadata: [
                    "path": "\(path)", "error": "\(error)",
                    "next": "the buffer keeps its content and is not saved over the file; looking again in \(wait.wholeMilliseconds) ms",
                ])
            rescheduleTimer()
            return
        }
        await apply(disk)
    }

    /// Whether an external change has reached the buffer but not yet its text: a reconcile is
    /// under way, or waits for the save in flight or the first read.
    var isReconciling: Bool { machine.isReconciling }

    /// Returns once every external change handed to the buffer is in its text (merged, reloaded
    /// or kept aside), or the buffer is closed.
    func waitUntilReconciled() async {
        await withCheckedContinuation { waiter in
            if machine.waitUntilReconciled(waiter) == .resumeNow { waiter.resume() }
        }
    }

    private func apply(_ disk: DiskVersion?) async {
        // Renamed over while it read: the file at its path is another's, not a version of its own.
        guard !machine.isDisplaced else { return }
        await reconcile(with: disk)
        await endPinnedChain()
    }

    private func reconcile(with disk: DiskVersion?) async {
        let decision = Reconciliation.decide(
            base: base?.bytes, content: content, disk: disk?.bytes, mergeEnabled: context.configuration.conflicts.merge)
        switch decision {
        case .unchanged:
            base = disk
            // A look at a disk with nothing new is not an edit: the autosave window stays where
            // it was (pushing it later on each look held a save back for as long as looks came).
            if !isDirty {
                schedule.cleaned()
            } else if schedule.deadline == nil {
                schedule.edited(at: context.clock.now)
            }
            rescheduleTimer()
        case .reload:
            guard let disk else { return }
            text = TextRope(disk.bytes)
            adoptBase(disk, text: text)
            revision += 1
            context.logger.info("reloaded", metadata: ["path": "\(path)", "revision": "\(revision)", "bytes": "\(disk.bytes.count)"])
            context.emit(.reloaded(path: path, revision: revision))
            contentChanged()
        case .merge(let merged):
            guard let disk else { return }
            text = TextRope(merged)
            base = disk
            revision += 1
            context.logger.info("merged", metadata: ["path": "\(path)", "revision": "\(revision)", "bytes": "\(merged.count)"])
            context.emit(.merged(path: path, revision: revision))
            contentChanged()
        case .conflict(let cause):
            guard let disk else { return }
            await keepBoth(disk, cause: cause)
        case .recreate:
            vanished = base ?? vanished
            base = nil
            // Not at once: a rename whose event has not settled yet looks the same from here, and
            // then the buffer is to follow the file, not bring back its old name.
            let wait = Self.waitBeforeRecreating(settleMs: context.configuration.watch.settleMs)
            announceConflict(
                path: path, kind: "removed", kept: .buffer, copy: nil, revision: revision,
                next: "the file was removed under unsaved edits; writing it again from the buffer in \(wait.wholeMilliseconds) ms, unless it turns out renamed")
            contentChanged()
            schedule.retry(at: context.clock.now.advanced(by: wait))
            rescheduleTimer()
        case .close:
            let waiters = machine.removedWhileClean()
            base = nil
            didClose(waiters)
            context.logger.info("removed", metadata: ["path": "\(path)", "revision": "\(revision)"])
            context.emit(.removed(path: path))
        }
    }

    /// Sets the side that keeps the path when this buffer's edits overlap the disk's (nil: the
    /// configuration's `conflicts.keep`).
    func keepOnConflict(_ side: ConflictSide?) {
        conflictSide = side
    }

    /// How long a buffer whose file vanished waits before writing it again: past the settle
    /// window that would report the file renamed.
    static func waitBeforeRecreating(settleMs: Int) -> Duration { .milliseconds(2 * settleMs + 100) }

    /// Edits that cannot be merged (they overlap, or a side is binary): the configured side keeps
    /// the path, the other is copied aside first.
    func keepBoth(_ disk: DiskVersion, cause: Reconciliation.ConflictCause = .overlap) async {
        let keep = conflictSide ?? context.configuration.conflicts.keep
        let loser = keep == .disk ? (content ?? []) : disk.bytes
        let revisionAtStart = revision
        let path = self.path
        let kept: ConflictCopies.Kept
        do {
            // The buffer's edits came from its base; the disk's version is its own parent (the
            // outside change recorded just before).
            kept = try await writeConflictCopy(
                of: loser, path: path, revision: revision, parent: keep == .disk ? base?.bytes : disk.bytes,
                holdsEdits: keep == .disk)
        } catch {
            let milliseconds = millisecondsUntil(schedule.saveFailed(at: context.clock.now))
            reportConflictCopyFailed(
                path: path, error: error,
                next: "both versions stay (disk on disk, edits in the buffer); retrying in \(milliseconds) ms")
            rescheduleTimer()
            return
        }
        guard self.revision == revisionAtStart, !machine.isSaving, !machine.isClosed else {
            // Edited while the copy was written: decide again with what is there now.
            await reconcileWithDisk()
            return
        }
        if keep == .disk {
            text = TextRope(disk.bytes)
            adoptBase(disk, text: text)
            self.revision += 1
            context.history?.editsLetGo(path)
        } else {
            base = disk
        }
        announceConflict(
            path: path, kind: cause.rawValue, kept: keep, copy: context.shown(kept.path), revision: revision,
            next: keep == .disk
                ? "the buffer took the disk version; its own edits are in the copy"
                : "the buffer's edits will be saved over the file; the disk version is in the copy")
        if kept.count > context.configuration.conflicts.maxCopiesPerFile {
            context.logger.warning(
                "conflict-copies",
                metadata: [
                    "path": "\(path)", "count": "\(kept.count)", "limit": "\(context.configuration.conflicts.maxCopiesPerFile)",
                    "next": "keeping them all; review and delete old copies in \(context.copies.directory)",
                ])
        }
        contentChanged()
    }

    /// Another file was renamed over this buffer's file: its unsaved edits go to a conflict copy,
    /// then the buffer closes. When the copy cannot be written, the buffer stays open, displaced:
    /// no path leads to it any more and it never saves, and its timer tries the copy again with
    /// the save backoff (the workspace's flush tries once more, then reports the edits lost).
    ///
    /// - Returns: whether the buffer closed (its edits copied, or nothing to keep).
    /// Edits taken while the copy is written are copied too: it closes only once its latest
    /// revision is in a copy.
    @discardableResult
    func closeReplaced() async -> Bool {
        while true {
            let (action, waiters) = machine.replaced(hasEditsToKeep: content != nil)
            guard action == .copyAside, let content else {
                didClose(waiters)
                return true
            }
            let copied = await copyReplaced(content)
            let (isClosed, closedWaiters) = machine.replacedCopyFinished(copied: copied)
            if isClosed {
                didClose(closedWaiters)
                return true
            }
            if copied == nil { return false }
        }
    }

    /// Writes the conflict copy of a displaced buffer's `content`.
    ///
    /// - Returns: the revision copied; nil when the copy could not be written (logged, and
    ///   retried by the timer).
    private func copyReplaced(_ content: [UInt8]) async -> Int? {
        let path = self.path
        let revision = self.revision
        do {
            let kept = try await writeConflictCopy(of: content, path: path, revision: revision, parent: base?.bytes, holdsEdits: true)
            context.history?.editsLetGo(path)
            announceConflict(
                path: path, kind: "replaced", kept: .disk, copy: context.shown(kept.path), revision: revision,
                next: "another file was renamed over it; the buffer's unsaved edits are in the copy")
            return revision
        } catch {
            let milliseconds = millisecondsUntil(schedule.saveFailed(at: context.clock.now))
            reportConflictCopyFailed(
                path: path, error: error,
                next: "another file was renamed over it; its unsaved edits stay in memory, and the copy is retried in \(milliseconds) ms (an agent crash before it is written loses them)")
            rescheduleTimer()
            return nil
        }
    }

    /// Takes back an edit the journal kept through a crash, and reconciles it with the disk now.
    ///
    /// When the file is still the version the edit was made on, or one a save of the buffer was
    /// writing (the buffer's own: edits taken during that save stand on it), the buffer is simply
    /// dirty again and autosaves. When it holds a save of the edit's revision or a later one (a
    /// merge of an outside edit, never journaled, saved before the journal heard it landed), the
    /// edit is in it already and the file stays as it is. When it changed while the agent was
    /// down, the edit's base is gone, so no merge is possible: both versions are kept, as for
    /// overlapping edits.
    func recover(_ record: JournalRecord) async {
        let recovered: TextRope? = record.kind == .delete ? nil : record.text
        let disk = baseDigest()
        let savesOnDisk = record.savesBegun.filter { $0.digest == disk }
        revision = max(revision, record.revision)
        if savesOnDisk.contains(where: { $0.revision >= record.revision }) {
            // Taking the record back would save an older text over the one that holds it.
            contentChanged()
            return
        }
        let isBaseUnchanged = disk == record.baseDigest || !savesOnDisk.isEmpty
        text = recovered
        guard isDirty else {
            contentChanged()
            return
        }
        context.logger.notice(
            "recovered",
            metadata: [
                "path": "\(path)", "revision": "\(revision)", "bytes": "\(recovered?.count ?? 0)",
                "next": isBaseUnchanged ? "saving it after the quiet window" : "the file changed while the agent was down; keeping both",
            ])
        if !isBaseUnchanged, let disk = base {
            await keepBoth(disk)
        } else {
            contentChanged()
        }
    }

    /// After the buffer took in a change of its file, a journal chain of its edits standing on a
    /// pinned copy of the file as it was ends with the buffer's whole text (and the file's new
    /// digest): recovery then sets that text against the disk as it is, rather than the chain's
    /// text against a version the disk has moved on from, which could only keep both.
    func endPinnedChain() async {
        guard isDirty, let journal = context.journal, await journal.isPinned(path) else { return }
        do { try await journal.append(journalRecord()) } catch {
            context.logger.warning(
                "journal-failed",
                metadata: ["path": "\(path)", "error": "\(error)", "next": "the edits stay in the buffer and are saved as usual"])
        }
    }
}
