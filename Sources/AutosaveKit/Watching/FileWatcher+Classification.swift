import ByteNames
import Glibc
import Inotify
import Logging

/// What a settled burst, or a rescan after lost events, did to the tree: the changes to report,
/// worked out against the files the watcher knows and what is on disk now.
extension FileWatcher {
    /// What a settled burst did, net: the renames that moved content from one known name to
    /// another (applied to the known files together, so a swap or a chain is one step), then one
    /// change for each other name whose state differs from what was known.
    func netChanges(of burst: ChangeSettler<C.Instant>.Burst) -> [FileChange] {
        var now: PathMap<Fingerprint> = [:]
        for name in burst.names { now[name] = Fingerprint.of(configuration.root + "/" + name) }
        var moves: [(from: String, to: String)] = []
        var movedSources = PathSet()
        for name in burst.names {
            // A source saved by the agent inside this very burst is not known yet, and is a file all the same.
            guard case .name(let source)? = burst.origins[name], !source.isSameName(as: name), now[name] != nil,
                known.contains(source) || ownWrites.isRecorded(source) || wasRecentlyRemoved(source), movedSources.insert(source)
            else { continue }
            moves.append((source, name))
        }
        for move in moves { known.remove(move.from) }
        // A source with a file at its name again, made after the rename and reported in an earlier
        // burst (not this one, which would classify it), is a file the watcher knows all the same.
        let burstNames = PathSet(burst.names)
        for move in moves where !burstNames.contains(move.from) && Fingerprint.of(configuration.root + "/" + move.from) != nil {
            known.insert(move.from)
        }
        var changes: [FileChange] = []
        /// The names a file passed through in this burst, but for where its content came from,
        /// that have no file now: known or not (a buffer may have opened a file made inside the
        /// burst), a buffer on one of them holding that file follows it.
        func arrival(at name: String, from origin: String?) -> [String] {
            (burst.hops[name] ?? []).filter { hop in origin.map { !hop.isSameName(as: $0) } ?? true && now[hop] == nil }
        }
        for move in moves {
            known.insert(move.to)
            ownWrites.forget(move.from)
            let hops = arrival(at: move.to, from: move.from)
            changes.append(FileChange(.moved, move.to, from: move.from, arrivedFrom: hops, fingerprint: now[move.to]))
        }
        let destinations = PathSet(moves.map(\.to))
        for name in burst.names where !destinations.contains(name) {
            guard var change = classify(name, current: now[name]) else { continue }
            if change.kind == .modified || change.isTransient, burst.unchanged.contains(name) { continue }
            if change.kind == .created || change.kind == .modified { change.arrivedFrom = arrival(at: name, from: nil) }
            changes.append(change)
        }
        for change in changes where change.kind != .removed {
            if let fingerprint = now[change.path] { rememberReported(change.path, fingerprint) }
        }
        return changes
    }

    /// Keeps `path` among the names reported removed a moment ago (a few hundred at most).
    func rememberRemoved(_ path: String) {
        if recentlyRemoved.count >= 256 {
            let horizon = clock.now.advanced(by: .zero - Self.renameHalfLife)
            recentlyRemoved = recentlyRemoved.filter { $0 >= horizon }
            if recentlyRemoved.count >= 256 { recentlyRemoved.removeAll() }
        }
        recentlyRemoved[path] = clock.now
    }

    /// Whether `path` was reported removed within `renameHalfLife`.
    func wasRecentlyRemoved(_ path: String) -> Bool {
        guard let removed = recentlyRemoved[path] else { return false }
        return removed.duration(to: clock.now) <= Self.renameHalfLife
    }

    /// How long a removal may turn out to have been a rename's first half.
    static var renameHalfLife: Duration { .seconds(2) }

    /// The change of one name, comparing what was known with what is there now (`current`, which
    /// the change carries on).
    func classify(_ path: String, current: Fingerprint?) -> FileChange? {
        // A file the agent wrote there existed, even when its own events settle in the same
        // window as the change after them (an `rm` right after the agent created the file):
        // that is a removal to report, not a file created and gone again.
        let existedBefore = known.contains(path) || ownWrites.expectsFile(path)
        if ownWrites.isOwn(path, current: current) {
            recordOwnWrite(path, existedBefore: known.contains(path), exists: current != nil)
            if current == nil { known.remove(path) } else { known.insert(path) }
            logger.trace("own-write", metadata: ["path": "\(path)"])
            // A save written in place through one name of a file with several (hard links)
            // changed the others too: nothing to report, but their buffers must look again.
            if let current, current.links > 1 {
                return FileChange(.removed, path, isTransient: true, fingerprint: current)
            }
            return nil
        }
        switch (existedBefore, current != nil) {
        case (true, true):
            // Known already, or the agent's own file whose events have not settled yet.
            known.insert(path)
            return FileChange(.modified, path, fingerprint: current)
        case (false, true):
            known.insert(path)
            return FileChange(.created, path, fingerprint: current)
        case (true, false):
            known.remove(path)
            rememberRemoved(path)
            return FileChange(.removed, path)
        case (false, false):
            // Created and gone again (or renamed on) inside the window: a buffer opened on it, or
            // one that looked at the disk while following a rename, saw a file that is not there.
            return FileChange(.removed, path, isTransient: true)
        }
    }

    func rememberReported(_ path: String, _ fingerprint: Fingerprint) {
        if reportedChangeTimes.count >= 4096 {
            let newest = reportedChangeTimes.values.max() ?? 0
            reportedChangeTimes = reportedChangeTimes.filter { $0 > newest - 5_000_000_000 }
            if reportedChangeTimes.count >= 4096 { reportedChangeTimes.removeAll() }
        }
        reportedChangeTimes[path] = fingerprint.changed
    }

    /// Whether a rescan's candidate, `current` on disk, is something the watcher already reported
    /// or made itself.
    func isAlreadyAccountedFor(_ path: String, current: Fingerprint?) -> Bool {
        if let current, reportedChangeTimes[path] == current.changed { return true }
        return ownWrites.isOwn(path, current: current)
    }

    func applyRescan(_ scan: DirectoryScan) {
        let threshold = scan.unseenSince.map { $0 - Self.changeTimeMargin }
        var counts: [FileChange.Kind: Int] = [:]
        var scanned = PathSet()
        var changes: [FileChange] = []
        func report(_ change: FileChange) {
            counts[change.kind, default: 0] += 1
            changes.append(change)
        }
        for file in scan.files {
            scanned.insert(file.path)
            guard !settler.isPending(file.path) else { continue }
            if !known.contains(file.path) {
                known.insert(file.path)
                // The listing holds names (and change times), not fingerprints: the one look a
                // reported change needs is taken here, so the buffers need not take their own.
                let current = Fingerprint.of(configuration.root + "/" + file.path)
                report(FileChange(.created, file.path, fingerprint: current))
            } else if let threshold, let changed = file.changeTime, changed >= threshold {
                let current = Fingerprint.of(configuration.root + "/" + file.path)
                guard !isAlreadyAccountedFor(file.path, current: current) else { continue }
                report(FileChange(.modified, file.path, fingerprint: current))
            }
        }
        let inScope: [String]
        if scan.isRecursive {
            inScope = known.all.filter { path in scan.scope.contains { KnownFiles.isSame(path, orBelow: $0) } }
        } else {
            inScope = scan.scope.flatMap { known.files(in: $0) }
        }
        for path in inScope.sorted() where !scanned.contains(path) && !settler.isPending(path) {
            known.remove(path)
            report(FileChange(.removed, path))
        }
        reportedChangeTimes.removeAll()
        if !changes.isEmpty { emit(changes) }
        // Whatever happened while events were lost may not all be in what the rescan found.
        markChangesLost()
        ledger.isPartial = hasBlindDirectory || !scan.unwatched.isEmpty
        logger.notice(
            "rescan",
            metadata: [
                "scope": "\(scan.isRecursive && scan.scope == [""] ? "all" : scan.scope.joined(separator: ","))",
                "dirs": "\(scan.directories)", "watches": "\(scan.watches)", "unwatched": "\(scan.unwatched.count)",
                "files": "\(scan.fileCount)", "created": "\(counts[.created, default: 0])",
                "modified": "\(counts[.modified, default: 0])", "removed": "\(counts[.removed, default: 0])",
                "ms": "\(Self.rounded(scan.milliseconds))",
            ])
        if scan.unwatched.isEmpty {
            stopRescanTimer()
        }
        rescansContinuation.yield()
    }
}
