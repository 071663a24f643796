import FoundationEssentials
import Logging

extension FileBuffer {
    /// Saves now, whatever the window says, and returns once the buffer's text is durable on disk.
    /// A file another process holds open for writing is written in place: asked for now, the save
    /// does not wait for the writer.
    ///
    /// A save that finds the file changed since the buffer read it merges first (or keeps both
    /// versions), and one that finds it gone marks it to be written again; neither writes the
    /// revision asked for, so the save goes again, up to `explicitSaveAttempts` times in all.
    /// (Returning after the first, `close` forgot a buffer whose merge was never written.) Edits
    /// made while it writes are left to the next save.
    ///
    /// A save in flight is waited for first, and so is a look at the disk under way (a save
    /// never writes over a version the buffer has not taken in).
    ///
    /// - Throws: `WorkspaceError.saveFailed`, the buffer still dirty and retrying with backoff:
    ///   the write failed, or the file changed under every attempt (`changedOnDisk`), or another
    ///   file was renamed over it (it is displaced, its edits on their way to a conflict copy).
    func save() async throws(WorkspaceError) {
        var attempts = 0
        while true {
            switch machine.saveRequested() {
            case .nothingToSave:
                return
            case .copyAside:
                if await closeReplaced() { return }
                throw .saveFailed(path: path, .changedOnDisk(path: path))
            case .waitForSave:
                await withCheckedContinuation { waiter in
                    if machine.waitForSave(waiter) == .resumeNow { waiter.resume() }
                }
            case .waitForReconcile:
                await waitUntilReconciled()
            case .start(let asked):
                attempts += 1
                if let error = await write(revision: asked, heldOpen: .writeInPlace) { throw .saveFailed(path: path, error) }
                if let saved = machine.savedRevision, saved >= asked { return }
                if attempts >= Self.explicitSaveAttempts { throw .saveFailed(path: path, .changedOnDisk(path: path)) }
            }
        }
    }

    /// Tries an explicit save makes before it gives up on a file that changes under each one.
    static var explicitSaveAttempts: Int { 4 }

    /// Writes the current revision if the machine lets a save start now (the autosave timer's
    /// save); nil on success, or when no save started.
    ///
    /// - Parameter heldOpen: what to do about a file another process holds open for writing; an
    ///   autosave waits for the close (`.wait`) until `maxDelayMs` after the first unsaved edit.
    @discardableResult
    func performSave(heldOpen: AtomicWriter.HeldOpen) async -> WriteError? {
        // A save in flight, or a look at the disk, re-arms the timer when it is done.
        guard case .start(let revision) = machine.saveRequested() else { return nil }
        return await write(revision: revision, heldOpen: heldOpen)
    }

    /// Writes `revision` (the current one, which the machine just let start); nil on success (or
    /// when the save became a reconcile, or waits for a writer to close the file).
    private func write(revision: Int, heldOpen: AtomicWriter.HeldOpen) async -> WriteError? {
        let snapshot = (revision: revision, text: text, expected: base?.fingerprint)
        let writer = context.writer
        let path = self.path
        schedule.saveStarted()
        let started = ContinuousClock.now
        let prepared = await prepareSave(of: snapshot.text, revision: snapshot.revision)
        let result: Result<(commit: Commit, bytes: [UInt8])?, WriteError>
        do {
            let commit = try await BlockingIO.run { () throws(WriteError) -> (commit: Commit, bytes: [UInt8])? in
                guard let text = snapshot.text else {
                    if let expected = snapshot.expected { try writer.remove(path, expecting: expected) }
                    return nil
                }
                // The one copy of the text a save makes, off the actor (unless prepared already).
                let bytes = prepared?.bytes ?? text.bytes
                return (try writer.commit(bytes, to: path, expecting: snapshot.expected, heldOpen: heldOpen), bytes)
            }
            result = .success(commit)
        } catch {
            result = .failure(error)
        }
        // Callers of `save()` that waited go once the save is wholly done (reported, and any
        // change of the disk it found taken in).
        var waiters: [CheckedContinuation<Void, Never>] = []
        defer { resume(waiters) }
        switch result {
        case .success(let written):
            let commit = written?.commit
            adoptBase(
                written.map { DiskVersion(bytes: $0.bytes, fingerprint: $0.commit.fingerprint) }, text: snapshot.text, digest: prepared?.digest)
            schedule.saveSucceeded()
            let elapsed = ContinuousClock.now - started
            let milliseconds = elapsed.milliseconds
            let size = snapshot.text?.count ?? 0
            var metadata: Logger.Metadata = [
                "path": "\(path)", "revision": "\(snapshot.revision)", "bytes": "\(size)",
                "ms": "\((milliseconds * 10).rounded() / 10)",
            ]
            if let reason = commit?.inPlace {
                metadata["inPlace"] = "true"
                metadata["reason"] = "\(reason.rawValue)"
            }
            context.logger.info(snapshot.text == nil ? "deleted" : "saved", metadata: metadata)
            context.emit(.saved(path: path, revision: snapshot.revision, bytes: size))
            context.history?.saved(path, bytes: written?.bytes)
            // Durable and reported; the old version goes now. A save waited on returns after it.
            if let displaced = commit?.displaced { await BlockingIO.run { displaced.remove() } }
            let finished = machine.saveFinished(.saved(revision: snapshot.revision))
            waiters = finished.waiters
            do { try await context.journal?.markSaved(path, revision: snapshot.revision, source: journalSource) } catch {
                context.logger.warning(
                    "journal-failed",
                    metadata: ["path": "\(path)", "error": "\(error)", "next": "the saved edit may be recovered again after a crash (harmless)"])
            }
            if isDirty { schedule.edited(at: context.clock.now) } else { schedule.cleaned() }
            rescheduleTimer()
            if finished.mustReconcile { await takeInDisk() }
            return nil
        case .failure(.heldOpen):
            let finished = machine.saveFinished(.heldOpen)
            waiters = finished.waiters
            waitForWriter(isFirstWait: finished.isFirstWaitForWriter)
            if finished.mustReconcile { await takeInDisk() }
            return nil
        case .failure(.changedOnDisk):
            let finished = machine.saveFinished(.changedOnDisk)
            waiters = finished.waiters
            // Someone wrote the file since the buffer last saw it: merge instead of clobbering.
            if isDirty { schedule.saveFoundFileChanged(at: context.clock.now) }
            await takeInDisk()
            return nil
        case .failure(let error):
            let finished = machine.saveFinished(.failed)
            waiters = finished.waiters
            let milliseconds = millisecondsUntil(schedule.saveFailed(at: context.clock.now))
            context.logger.warning(
                "save-failed",
                metadata: [
                    "path": "\(path)", "revision": "\(snapshot.revision)", "error": "\(error)",
                    "next": "the buffer stays dirty; retrying in \(milliseconds) ms",
                ])
            context.emit(.saveFailed(path: path, error: error.description, retryInMilliseconds: milliseconds))
            if error.isNowhereToLand { await keepAsideOrLog(because: error) }
            rescheduleTimer()
            if finished.mustReconcile { await takeInDisk() }
            return error
        }
    }

    /// The bytes a save of `text` writes and their digest, which goes to the journal before the
    /// file changes (`willSave`): an edit taken while the save is written stands on these bytes,
    /// and after a crash at any moment of the save recovery must know that the file may hold them.
    /// Nil when there is no journal (the commit copies the text itself) or the save deletes the file.
    private func prepareSave(of text: TextRope?, revision: Int) async -> (bytes: [UInt8], digest: UInt64)? {
        guard let text, let journal = context.journal else { return nil }
        let digested = { @Sendable () -> (bytes: [UInt8], digest: UInt64) in
            let bytes = text.bytes
            return (bytes, ContentDigest.of(bytes))
        }
        // A small text is copied and digested in less time than a hop to the thread pool takes.
        let prepared = text.count <= Self.inlineDigestLimit ? digested() : await BlockingIO.run(digested)
        do { try await journal.willSave(path, revision: revision, digest: prepared.digest) } catch {
            context.logger.warning(
                "journal-failed",
                metadata: [
                    "path": "\(path)", "error": "\(error)",
                    "next": "the save goes on; after a crash while it is written, edits taken meanwhile may be kept beside it as a conflict copy",
                ])
        }
        return prepared
    }

    /// Texts up to this size are copied and digested for a save on the buffer's own thread.
    static var inlineDigestLimit: Int { 64 << 10 }
}
