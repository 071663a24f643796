import ByteNames
import Inotify
import Logging
import SystemPackage

extension FileWatcher {
    /// Takes in one event from the watcher thread, in kernel order: a file's event opens or
    /// extends its settle window; a directory's moves, listings and removals update the known
    /// files and are reported at once; overflows and rescans compare the known files with disk.
    func handle(_ event: WatchEvent, at now: C.Instant) {
        switch event {
        case .file(let file):
            if file.kind == .deleted || file.kind == .movedFrom { lastRemovalSeen = now }
            if file.kind == .movedFrom { renamesHalfSeen.insert(file.cookie) }
            if file.kind == .movedTo { renamesHalfSeen.remove(file.cookie) }
            settler.record(file, at: now)
        case .directoryAppeared(let path, let files):
            logger.debug("directory-appeared", metadata: ["path": "\(path)", "files": "\(files.count)"])
            for file in files { settler.touch(file, at: now) }
            // A file renamed into the new directory and out again before its watch was in place
            // left no event and no listing: a buffer opened on it meanwhile must look again.
            emit([FileChange(.removed, path, isDirectory: true, isTransient: true)])
        case .directoryMoved(let from, let to):
            // A directory is renamed only over an empty one: files still known there are gone.
            let gone = known.filesBelow(to).filter { !KnownFiles.isSame($0, orBelow: from) }
            for file in gone { known.remove(file) }
            if !gone.isEmpty { emit(gone.sorted().map { FileChange(.removed, $0) }) }
            known.moveDirectory(from: from, to: to)
            ownWrites.moveDirectory(from: from, to: to)
            settler.moveDirectory(from: from, to: to)
            emit([FileChange(.moved, to, from: from, isDirectory: true)])
        case .directoryListed(let path, let files):
            // Whatever settled while the move's event was on its way looked at the disk as it
            // was after the move: what the listing and the known files disagree on gets a look.
            let listed = PathSet(files)
            let knownBelow = PathSet(known.filesBelow(path))
            for file in files where !knownBelow.contains(file) { settler.touch(file, at: now) }
            for file in knownBelow where !listed.contains(file) { settler.touch(file, at: now) }
        case .directoryIgnored(let path):
            let files = known.removeDirectory(path)
            ignoredFolders.insert(path)
            settler.forget(below: path)
            logger.notice(
                "state-dir-ignored",
                metadata: [
                    "path": "\(path)", "reason": "it holds \(AgentLock.fileName): another agent's state directory",
                    "next": "not watched, nothing in it reported (\(files) files forgotten)",
                ])
        case .ignoredChanged(let path, let isDirectory):
            recordIgnored(path, isDirectory: isDirectory)
        case .rootMoved:
            markChangesLost()
            reportRootMoved()
        case .directoryRemoved(let path) where path.isEmpty:
            markChangesLost()
            reportRootRemoved()
        case .directoryRemoved(let path):
            lastRemovalSeen = now
            // Files renamed out of it before it went are not gone: their renames settle as moves.
            let renamedOut = settler.renameSources(below: path).filter(known.contains)
            let files = known.removeDirectory(path) { ledger.record($0, .removed) }
            for file in renamedOut { known.insert(file) }
            emit([FileChange(.removed, path, isDirectory: true)], extra: ["files": "\(files - renamedOut.count)"])
        case .overflow:
            markChangesLost()
            logger.warning(
                "overflow",
                metadata: [
                    "limit": "\(KernelLimits.maxQueuedEvents ?? 0)",
                    "error": "the kernel's inotify queue overflowed and events were lost",
                    "next": "rescanning the whole tree",
                ])
        case .rescanned(let scan):
            applyRescan(scan)
        case .controlDirectoryLost:
            stateDirectoryLossesContinuation.yield(configuration.stateDirectory)
        case .watchBlind(let path, let reason):
            hasBlindDirectory = true
            ledger.isPartial = true
            markChangesLost()
            let why = reason == .fileNameTooLong
                ? "its absolute path is longer than the kernel takes (PATH_MAX, 4096 bytes)" : "inotify_add_watch: \(reason.description)"
            logger.warning(
                "watch-blind",
                metadata: [
                    "path": "\(path)", "reason": "\(why)",
                    "next": "files created or changed in it are not seen; buffers open on them are not reconciled with outside changes",
                ])
        case .watchLimit(let limit, let unwatched):
            let interval = rescanInterval
            ledger.isPartial = true
            markChangesLost()
            logger.warning(
                "watch-limit",
                metadata: [
                    "limit": "\(limit)", "unwatched": "\(unwatched)",
                    "sysctl": "\(KernelLimits.raiseWatchLimitCommand(to: max(limit * 2, 524_288)))",
                    "error": "inotify_add_watch: No space left on device (the per-user watch limit is reached)",
                    "next": "keeping the \(unwatched) unwatched directories up to date by rescanning every \(interval.components.seconds) s",
                ])
            startRescanTimer(every: interval)
        case .barrier(let number) where number == renameBarrier:
            // Whatever came before the barrier is in: a rename it answers for still half seen left
            // the tree. One half seen since waits for a barrier of its own.
            renameBarrier = nil
            renamesHalfSeen.subtract(renamesAwaited)
            renamesAwaited = []
        case .barrier(let number):
            barrierWaiters.removeValue(forKey: number)?.resume(returning: settler.latestDeadline)
        case .failed(let error):
            guard !isRootRemoved else {
                // The root went first; its removal is what the owner needs to hear about.
                reportRootRemoved()
                return
            }
            logger.error("watch-failed", metadata: ["error": "\(error)", "next": "stopping: changes are no longer seen"])
        }
    }

    var rescanInterval: Duration {
        let seconds = configuration.configuration.watch.rescanIntervalS
        return seconds > 0 ? .seconds(seconds) : Self.defaultRescanInterval
    }
}
