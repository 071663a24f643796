import ByteNames
import Glibc
import Inotify
import Logging

/// How settled external changes reach the buffers: renames followed (all of a burst's at once,
/// and by identity where the kernel said too little), then each buffer concerned reconciled.
extension Workspace {
    /// Takes one settled burst: buffers follow its renames all at once (a swap moves both), then
    /// each buffer it concerns is reconciled with its file.
    func handle(_ burst: [FileChange]) async {
        changesInHand = burst.count
        let postponed = postponedLooks
        postponedLooks = []
        for change in burst where !change.isTransient {
            broadcast.emit(.externalChange(change))
            history?.record(change)
        }
        var moves: [Rename] = []
        for change in burst where change.kind == .moved {
            let from = change.from ?? ""
            if change.isDirectory {
                for key in buffers.keys where KnownFiles.isSame(key, orBelow: from) {
                    guard let below = key.pathBelow(from) else { continue }
                    moves.append(Rename(from: key, to: change.path + "/" + below, directory: from, intoDirectory: change.path))
                }
            } else {
                moves.append(Rename(from: from, to: change.path))
            }
        }
        let settled = SettledFiles(burst, root: root)
        moves += await renamesFoundByIdentity(in: burst, besides: moves, settled: settled)
        await follow(moves)
        for change in burst {
            switch (change.kind, change.isDirectory) {
            case (.moved, true), (.removed, true):
                // Buffers open below the new place, moved there or already there (on a name that
                // had no file, or a file the folder brought along), look at what is there now; so
                // do those left below the old place (their files did not go where the folder went).
                let places = [change.path] + (change.from.map { [$0] } ?? [])
                for key in buffers.sortedKeys where places.contains(where: { KnownFiles.isSame(key, orBelow: $0) }) {
                    await reconcile(key)
                }
            default:
                await reconcile(change.path)
            }
        }
        // Any burst, a rename included: a write through a name, then a rename over that name,
        // reach the watcher as the rename alone.
        await reconcileOtherLinks(settled: settled, foldersWent: burst.contains { $0.isDirectory && $0.kind == .removed })
        // Looks an earlier burst put off: this burst's renames have been followed now.
        for key in postponed.sorted { await reconcile(key) }
        changesInHand = 0
        handledChanges += burst.count
        let ready = handledWaiters.filter { $0.count <= handledChanges }
        handledWaiters.removeAll { $0.count <= handledChanges }
        for waiter in ready { waiter.continuation.resume() }
    }

    /// Renames nobody reported for a buffer: its file left its name and turned up where the burst
    /// created or moved a file — the same file, by its whole fingerprint. The kernel reports a rename
    /// into a folder made a moment before only half (removed + created), and a file that reached
    /// the buffer's name inside the burst (renamed over it, then on) was never the name's at its
    /// start; a file created and renamed over another inside one burst was never known at all, and
    /// its new name shows as modified. The buffer follows its file. Where the kernel paired the
    /// rename from the buffer's name (`arrivedFrom`: a file created, renamed over the buffer's
    /// name, then on, all in one burst), the same device and inode are enough: it is the file the
    /// name held, written since or not.
    ///
    /// Names are compared as the burst settled (`settled`), where it has news of them: `follow`
    /// looks at the disk again before a buffer moves.
    func renamesFoundByIdentity(
        in burst: [FileChange], besides moves: [Rename], settled: SettledFiles
    ) async -> [Rename] {
        let arrivals = burst.filter { $0.kind != .removed && !$0.isDirectory }
        guard !arrivals.isEmpty else { return [] }
        let arrived = arrivals.compactMap { change in change.fingerprint.map { (change.path, $0, change.arrivedFrom) } }
        let moving = PathSet(moves.map(\.from))
        var found: [Rename] = []
        // Only buffers whose name has no file any more can have lost it this way.
        for key in buffers.sortedKeys where !moving.contains(key) && settled.fingerprint(of: key) == nil {
            // The whole fingerprint, not the inode alone: a file created where one was just deleted
            // often gets its inode number.
            // A file with other names (hard links) lost one name, not its place: the others keep its
            // content, and the buffer writes its own name again.
            guard let identity = await buffers[key]?.fileIdentity, identity.links <= 1,
                let (path, _, _) = arrived.first(where: { path, fingerprint, hop in
                    fingerprint == identity
                        || (hop.contains { $0.isSameName(as: key) } && fingerprint.device == identity.device
                            && fingerprint.inode == identity.inode)
                })
            else { continue }
            found.append(Rename(from: key, to: path))
        }
        return found
    }

    /// Before an explicit save or close: a buffer whose file has left its name may be following a
    /// rename whose news is not in yet. Writing the old name again at once (as a save does for a
    /// file that is gone) would bring back a file someone just moved away, a ghost beside the real
    /// one. So the news is fetched first: every kernel event read, every settled change taken (the
    /// buffer may follow a rename then, and look again from its new name), and the names whose
    /// change is still settling looked at; one holding the buffer's file (the same inode) is
    /// where it went, and the buffer follows it now, as the settled rename will. A file of several
    /// names (hard links) follows only a rename the kernel paired from the buffer's name: one of
    /// its names unlinked leaves the others, and the buffer writes its own again.
    func followRenameOnItsWay(of buffer: FileBuffer<C>) async {
        // A few hops at most: each is a rename the buffer followed.
        for _ in 0..<4 {
            let key = await buffer.path
            guard buffers[key] === buffer, let identity = await buffer.fileIdentity else { return }
            func holdsTheFile(_ path: String) -> Bool {
                guard let there = Fingerprint.of(root + "/" + path) else { return false }
                return there.device == identity.device && there.inode == identity.inode
            }
            guard !holdsTheFile(key) else { return }
            await watcher.sync()
            await waitForHandledChanges()
            guard await buffer.path.isSameName(as: key) else { continue }
            guard buffers[key] === buffer, !holdsTheFile(key) else { return }
            let candidates = identity.links <= 1 ? await watcher.pendingNames.sorted() : await watcher.pendingRenames(from: key)
            var found: String?
            for name in candidates where !name.isSameName(as: key) && holdsTheFile(name) {
                // The inode number of a file just deleted is often the next new file's: one that
                // another buffer holds as its own (its save wrote it) is that buffer's file, not
                // this one's moved on.
                if let other = buffers[name], other !== buffer, let theirs = await other.fileIdentity,
                    theirs.device == identity.device, theirs.inode == identity.inode
                {
                    continue
                }
                found = name
                break
            }
            guard let found else { return }
            await follow([Rename(from: key, to: found)])
        }
    }

    /// Whether `path` (relative to the root) is a folder now, not through a link.
    func isFolder(_ path: String) -> Bool {
        guard let status = Fingerprint.of(root + "/" + path) else { return false }
        return status.mode & UInt32(S_IFMT) == UInt32(S_IFDIR)
    }

    /// A rename a buffer may follow; `directory` is set when it comes from a folder's rename.
    struct Rename {
        var from: String
        var to: String
        var directory: String? = nil
        /// Where that folder went.
        var intoDirectory: String? = nil
    }

    /// Moves the buffers of renamed files to their new names, all renames of a burst at once.
    ///
    /// A buffer follows only if its file went: one opened on the name after the rename (inside the
    /// settle window) has its own file still there, or none, and stays.
    func follow(_ moves: [Rename]) async {
        var candidates: [(Rename, FileBuffer<C>)] = []
        for move in moves {
            guard let buffer = buffers[move.from] else { continue }
            if let base = await buffer.fileIdentity {
                // Looked at now, not as the burst settled: a buffer opened on the old name since
                // has its own file there, and stays.
                func holds(_ path: String) -> Bool {
                    guard let there = Fingerprint.of(root + "/" + path) else { return false }
                    return there.device == base.device && there.inode == base.inode
                }
                if holds(move.from) { continue }
                // A folder's rename is news of the folder, not of each file in it: the folder
                // may have moved on since (away and back), and a buffer sent where no folder is
                // would write its old name again in the wrong place. It follows when its file is
                // where the folder went, or, its file gone (replaced meanwhile), when the folder
                // is still there.
                if let folder = move.intoDirectory, !holds(move.to), !isFolder(folder) { continue }
            } else {
                // A buffer with no file of its own (a new name, never saved) follows only its
                // folder, and only when no folder of that name is back (one it may belong to).
                guard let directory = move.directory, Fingerprint.of(root + "/" + directory) == nil else { continue }
            }
            candidates.append((move, buffer))
        }
        // The map changes with no await in between, so no request ever finds neither buffer;
        // every source leaves before any destination is taken, so a swap or a cycle loses no one.
        let moving = candidates.filter { buffers[$0.0.from] === $0.1 }
        for (move, _) in moving { buffers[move.from] = nil }
        var replaced: [FileBuffer<C>] = []
        for (move, buffer) in moving {
            if let previous = buffers[move.to] { replaced.append(previous) }
            buffers[move.to] = buffer
        }
        for (move, buffer) in moving {
            await buffer.move(to: move.to)
            if let journal = context.journal, await buffer.isDirty {
                // Unsaved edits now belong to the new name, also after a crash.
                let record = await buffer.journalRecord()
                try? await journal.append(record)
                try? await journal.markSaved(move.from, revision: record.revision, source: record.source)
            }
            logger.info("moved", metadata: ["from": "\(move.from)", "to": "\(move.to)"])
            broadcast.emit(.moved(from: move.from, to: move.to))
        }
        // A rename went over another open file: its unsaved edits go to a conflict copy, and
        // until that is written the buffer is kept aside.
        for buffer in replaced {
            let isClosed = await buffer.closeReplaced()
            if !isClosed { displaced.append(buffer) }
        }
        var stillDisplaced: [FileBuffer<C>] = []
        for buffer in displaced where await !buffer.isClosed { stillDisplaced.append(buffer) }
        displaced = stillDisplaced
    }

    /// A file written through one of its hard links changed under every other name too, and the
    /// kernel reports the name written through only: buffers open on a file of several names whose
    /// own name no longer shows the version they know look again. Asked of each buffer's own name,
    /// not of the name written through: that name may already hold another file (renamed over it
    /// in the same moment) when the change arrives. A name the burst changed is taken as it
    /// settled (`settled`): its buffer was reconciled just before, and a change since is news of a
    /// burst to come.
    ///
    /// `foldersWent`: the burst removed a folder. A name linked into it, written through and
    /// removed with it inside one window was never reported, and the file it shared is back to
    /// one name by now: every buffer whose file's fingerprint moved looks again.
    func reconcileOtherLinks(settled: SettledFiles, foldersWent: Bool) async {
        for key in buffers.sortedKeys {
            guard let base = await buffers[key]?.base?.fingerprint, let now = settled.fingerprint(of: key),
                now.links > 1 || base.links > 1 || foldersWent, now != base
            else { continue }
            await reconcile(key)
        }
    }

    func reconcileAll() async {
        for key in buffers.sortedKeys { await reconcile(key) }
    }

    func reconcile(_ path: String) async {
        guard let buffer = buffers[path] else { return }
        // The name holds another file than the buffer's: if a rename the watcher has not settled
        // yet put it there (a swap, say), that rename's burst decides whether the buffer follows
        // its own file; looking now would take the newcomer for the buffer's file (quietly, when
        // the two have the same bytes), and the buffer would then stay where its file left.
        // Looked at now, not as the change settled: the buffer reads the disk as it is now.
        if let identity = await buffer.fileIdentity, let there = Fingerprint.of(root + "/" + path),
            there.device != identity.device || there.inode != identity.inode
        {
            await watcher.sync()
            if await watcher.isInPendingRename(path) { return }
            // Settled already, but in a burst not handled yet: the look waits until it has been
            // (a swap's news came after the look at one of its names, which then took the other
            // file for its own and stayed when the swap came).
            if await watcher.emittedCount > handledChanges + changesInHand {
                _ = postponedLooks.insert(path)
                return
            }
        }
        await buffer.reconcileWithDisk()
        if await buffer.isClosed, buffers[path] === buffer { buffers[path] = nil }
    }
}

/// What a burst's changes saw at each name they concern, as the watcher looked when they settled,
/// so that a name it has just looked at is not looked at again on the change's way to the buffer.
struct SettledFiles {
    let root: String
    /// Every file change's name, with its file when it settled (nil: no file was there).
    private var seen: PathMap<Fingerprint?> = [:]

    init(_ burst: [FileChange], root: String) {
        self.root = root
        // A folder's change names no file; the files below it are looked at on disk.
        for change in burst where !change.isDirectory { seen.updateValue(change.fingerprint, forKey: change.path) }
    }

    /// The file at `path` (relative to the root): as the burst settled, for a name it changed;
    /// on disk now, for any other name. Nil when no file is there.
    func fingerprint(of path: String) -> Fingerprint? {
        if let settled = seen[path] { return settled }
        return Fingerprint.of(root + "/" + path)
    }
}
