import ByteNames
import Glibc
import Inotify

/// What changed since a clock: the watcher records every change of the tree it sees — other
/// programs', the agent's own saves, ignored names — in its `ChangeLedger`, and answers from it.
extension FileWatcher {
    /// The paths changed since `since`, after every kernel event that happened before the call
    /// has been taken in.
    ///
    /// - Parameters:
    ///   - includeUnsettled: also names whose change is still in its settle window (kind
    ///     `modified`: what it will settle as is not known yet), so the answer need not wait for
    ///     the window; they are listed again once settled. For git, which looks at each name.
    ///   - includeIgnored: also the names the agent ignores, and every ignored folder, changed
    ///     or not (it is not watched: whatever is in it may have changed).
    public func changes(
        since: ChangeClock?, includeUnsettled: Bool = false, includeIgnored: Bool = false,
        where include: (ChangedPath) -> Bool = { _ in true }
    ) async -> ChangesSince {
        await sync()
        var answer = ledger.changes(since: since) { change in (includeIgnored || !change.isIgnored) && include(change) }
        guard !answer.isFresh else { return answer }
        if includeUnsettled {
            for name in settler.pending.keys {
                let change = ChangedPath(path: name, kind: .modified)
                if include(change) { answer.changes.append(change) }
            }
        }
        if includeIgnored {
            for folder in ignoredFolders.sorted {
                let change = ChangedPath(path: folder + "/", kind: .modified, isIgnored: true)
                if include(change) { answer.changes.append(change) }
            }
        }
        return answer
    }

    /// The paths changed since `since` as recorded now, without waiting for anything: for a
    /// subscriber told that something new was recorded.
    public func recordedChanges(since: ChangeClock?, where include: (ChangedPath) -> Bool) -> ChangesSince {
        ledger.changes(since: since) { !$0.isIgnored && include($0) }
    }

    /// The clock as of now.
    public var changeClock: ChangeClock { ledger.clock }

    /// Records one settled change that is being reported.
    func recordInLedger(_ change: FileChange) {
        guard !change.isTransient else { return }
        let suffix = change.isDirectory ? "/" : ""
        if change.kind == .moved, let from = change.from {
            ledger.record(from + suffix, .removed)
            if change.isDirectory {
                // Whoever filters by a glob on file names (a language server's `**/*.py`) hears
                // of each file, not of the folder alone.
                for file in known.filesBelow(change.path) {
                    guard let below = file.pathBelow(change.path) else { continue }
                    ledger.record(from + "/" + below, .removed)
                    ledger.record(file, .moved, from: from + "/" + below)
                }
            }
            ledger.record(change.path + suffix, .moved, from: from + suffix)
        } else {
            ledger.record(change.path + suffix, change.kind)
        }
    }

    /// A file the agent wrote or removed itself (a save, a conflict copy, an undo): not reported
    /// as an outside change, but a change of the tree all the same.
    func recordOwnWrite(_ path: String, existedBefore: Bool, exists: Bool) {
        let kind: FileChange.Kind = !exists ? .removed : existedBefore ? .modified : .created
        ledger.record(path, kind)
        notifyChangeSubscribers()
    }

    /// An ignored name changed (see `WatchEvent.ignoredChanged`).
    func recordIgnored(_ path: String, isDirectory: Bool) {
        guard !rules.isOwned(path, isDirectory: isDirectory) else { return }
        if isDirectory {
            if isFolder(path) { ignoredFolders.insert(path) } else { ignoredFolders.remove(path) }
        }
        ledger.record(path + (isDirectory ? "/" : ""), .modified, isIgnored: true)
    }

    /// The first walk's ignored folders.
    func takeIgnoredFolders(_ folders: [String]) {
        for folder in folders where !rules.isOwned(folder, isDirectory: true) { ignoredFolders.insert(folder) }
    }

    /// Changes happened that were not recorded (events lost, a rescan): clocks from before now
    /// are answered `fresh`.
    func markChangesLost() {
        ledger.markLost()
        notifyChangeSubscribers()
    }

    private func isFolder(_ path: String) -> Bool {
        guard let status = Fingerprint.of(configuration.root + "/" + path) else { return false }
        return status.mode & UInt32(S_IFMT) == UInt32(S_IFDIR)
    }

    /// A signal each time changes were recorded (coalesced: one pending at most), until
    /// `endChangeSignal` or the watcher stops; a subscriber then asks `recordedChanges`.
    public func changeSignal() -> (id: Int, signals: AsyncStream<Void>) {
        let (stream, continuation) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        nextChangeSignal += 1
        changeSignals[nextChangeSignal] = continuation
        if isStopped { continuation.finish() }
        return (nextChangeSignal, stream)
    }

    /// Ends the signals of `changeSignal` number `id`.
    public func endChangeSignal(_ id: Int) {
        changeSignals.removeValue(forKey: id)?.finish()
    }

    func notifyChangeSubscribers() {
        for continuation in changeSignals.values { continuation.yield() }
    }

    func finishChangeSignals() {
        for continuation in changeSignals.values { continuation.finish() }
        changeSignals.removeAll()
    }
}
