import ByteNames
import Glibc
import SystemPackage

/// One watched tree, on the watcher thread: its directory nodes and the translation of kernel
/// events into `WatchEvent`s with relative paths.
final class TreeSession {
    let mailbox: Mailbox
    let instance: InotifyInstance
    let registry: WatchRegistry
    /// What `registry` knows this session by, from `init` until `stop()`.
    private var number: UInt32 = 0
    let tree = DirectoryNode(name: "", parent: nil)
    /// Directories that could not be watched; they are only rescanned.
    var unwatched: [ObjectIdentifier: DirectoryNode] = [:]
    var hasReportedWatchLimit = false
    /// Directories already reported blind (`watchBlind`), so each is reported once.
    var reportedBlind: Set<ObjectIdentifier> = []
    /// Directories moved away whose `MOVED_TO` has not been seen yet, by rename cookie.
    private var pendingMoves: [UInt32: (node: DirectoryNode, path: String)] = [:]
    /// Ignored names (temp files) that were renamed away, by rename cookie.
    private var ignoredMoveSources: [UInt32: String] = [:]

    init(mailbox: Mailbox, instance: InotifyInstance, registry: WatchRegistry) {
        self.mailbox = mailbox
        self.instance = instance
        self.registry = registry
        number = registry.enroll(self)
    }

    var root: String { mailbox.root }

    func absolutePath(_ relative: String) -> String { mailbox.absolutePath(relative) }

    func isIgnored(_ name: String, in directory: String, isDirectory: Bool) -> Bool {
        mailbox.ignores(name, in: directory, isDirectory: isDirectory)
    }

    /// The filter a listing of `directory` applies.
    func filter(for directory: String) -> EntryFilter {
        EntryFilter(mailbox: mailbox, directory: directory, collectsLeftovers: collectsLeftovers)
    }

    func emit(_ event: WatchEvent) { mailbox.sink.yield(event) }

    // MARK: - Lifecycle

    /// Leftovers (see `DirectoryWatcher`) are gathered during the first walk only.
    var collectsLeftovers = false
    var leftovers: [String] = []
    /// Ignored directories the first walk met, for its scan.
    var ignoredDirectories: [String] = []
    /// Ignored files reported (`ignoredChanged`) since the last barrier: a busy log that a rule
    /// ignores is reported once per barrier, not once per write. Whoever asks what changed asks
    /// after a barrier, and reads the file after the answer, so later writes in the same interval
    /// add nothing it does not see.
    private var ignoredSinceBarrier = PathSet()

    func start() -> Result<DirectoryScan, InotifyError> {
        collectsLeftovers = true
        let scan = scanTree(from: tree, statFiles: false, unseenSince: nil)
        collectsLeftovers = false
        if tree.wd == nil, let error = rootWatchError {
            return .failure(error)
        }
        return .success(scan)
    }

    func stop() {
        finishPendingMoves()
        for node in tree.subtree { forget(node, removingWatch: true) }
        registry.retire(number)
    }

    /// The instance cannot be read any more: the tree's stream ends.
    func report(readFailure error: InotifyError) {
        mailbox.sink.yield(.failed(error))
        mailbox.sink.finish()
    }

    // MARK: - Events

    func handle(_ event: RawInotifyEvent) {
        guard let node = nodeByWatch[event.wd] else { return }
        if !(event.has(IN_MOVED_TO) && pendingMoves[event.cookie] != nil) { finishPendingMoves() }
        if event.name.isEmpty {
            handleSelfEvent(event, node: node)
            return
        }
        let parentPath = node.relativePath
        // A directory detached by a move keeps its watch until the move resolves; stay silent.
        guard node === tree || isAttached(node) else { return }
        let path = parentPath.isEmpty ? event.name : parentPath + "/" + event.name
        let ignored = isIgnored(event.name, in: parentPath, isDirectory: event.isDirectory)
        if event.isDirectory, event.has(IN_DELETE) || event.has(IN_MOVED_FROM),
            let own = mailbox.ownDirectory, absolutePath(path) == own
        {
            emit(.controlDirectoryLost(path: own))
        }
        if !event.isDirectory, node !== tree, let marker = mailbox.privateMarker, event.name.isSameName(as: marker),
            event.has(IN_CREATE) || event.has(IN_MOVED_TO)
        {
            dropPrivate(node)
            return
        }
        if event.isDirectory {
            handleDirectoryEvent(event, parent: node, path: path, isIgnored: ignored)
        } else {
            handleFileEvent(event, path: path, isIgnored: ignored)
        }
    }

    private func handleSelfEvent(_ event: RawInotifyEvent, node: DirectoryNode) {
        if node === tree, event.has(IN_MOVE_SELF) {
            emit(.rootMoved)
            return
        }
        guard event.has(IN_IGNORED) || event.has(IN_DELETE_SELF) else { return }
        // The kernel dropped this watch (the directory is gone); the parent's event usually
        // removed the node already.
        if node === tree {
            forget(node, removingWatch: false)
            emit(.directoryRemoved(path: ""))
        } else if event.has(IN_IGNORED), let wd = node.wd {
            registry.release(wd)
            nodeByWatch[wd] = nil
            node.wd = nil
        }
    }

    private func handleDirectoryEvent(_ event: RawInotifyEvent, parent: DirectoryNode, path: String, isIgnored: Bool) {
        if isIgnored {
            // Not watched, but someone asking what changed (git) must hear that it did.
            reportIgnored(path, isDirectory: true)
        }
        if event.has(IN_CREATE) || event.has(IN_MOVED_TO) {
            if event.has(IN_MOVED_TO), let move = pendingMoves.removeValue(forKey: event.cookie) {
                if isIgnored {
                    dropSubtree(move.node)
                    emit(.directoryRemoved(path: move.path))
                    return
                }
                if let replaced = parent.children[event.name] { dropSubtree(replaced) }
                parent.adopt(move.node, as: event.name)
                emit(.directoryMoved(from: move.path, to: path))
                // Watched again and listed: a directory made a moment before its rename may not
                // have been watched yet (its watch failed at the old name), and whatever settled
                // meanwhile looked at a disk past the move.
                let scan = scanTree(from: move.node, statFiles: false, unseenSince: nil)
                emit(.directoryListed(path: path, files: scan.files.map(\.path)))
                return
            }
            guard !isIgnored else { return }
            if let stale = parent.children[event.name] { dropSubtree(stale) }
            let child = DirectoryNode(name: event.name, parent: parent)
            parent.children[event.name] = child
            let scan = scanTree(from: child, statFiles: false, unseenSince: nil)
            emit(.directoryAppeared(path: path, files: scan.files.map(\.path)))
        } else if event.has(IN_MOVED_FROM) {
            guard let child = parent.children[event.name] else { return }
            child.detach()
            pendingMoves[event.cookie] = (child, path)
        } else if event.has(IN_DELETE) {
            guard let child = parent.children[event.name] else { return }
            dropSubtree(child)
            emit(.directoryRemoved(path: path))
        }
    }

    private func handleFileEvent(_ event: RawInotifyEvent, path: String, isIgnored: Bool) {
        if isIgnored {
            if event.has(IN_MOVED_FROM) {
                if ignoredMoveSources.count > 64 { ignoredMoveSources.removeAll() }
                ignoredMoveSources[event.cookie] = path
            }
            // The agent's own temp files are its business alone; any other ignored file changed
            // is news for whoever asks what changed (git sees editors' droppings).
            if !mailbox.isLeftover(event.name), event.has(IN_CREATE) || event.has(IN_MODIFY) || event.has(IN_CLOSE_WRITE)
                || event.has(IN_ATTRIB) || event.has(IN_DELETE) || event.has(IN_MOVED_FROM) || event.has(IN_MOVED_TO)
            {
                reportIgnored(path, isDirectory: false)
            }
            return
        }
        let kind: FileEvent.Kind
        if event.has(IN_CREATE) {
            kind = .created
        } else if event.has(IN_MODIFY) {
            kind = .modified
        } else if event.has(IN_CLOSE_WRITE) {
            kind = .closedAfterWrite
        } else if event.has(IN_ATTRIB) {
            kind = .attributesChanged
        } else if event.has(IN_DELETE) {
            kind = .deleted
        } else if event.has(IN_MOVED_FROM) {
            kind = .movedFrom
        } else if event.has(IN_MOVED_TO) {
            kind = .movedTo
        } else {
            return
        }
        let source = kind == .movedTo ? ignoredMoveSources.removeValue(forKey: event.cookie) : nil
        let cookie = kind == .movedFrom || kind == .movedTo ? event.cookie : 0
        emit(.file(FileEvent(path: path, kind: kind, cookie: cookie, renamedFromIgnored: source)))
    }

    /// Reports an ignored name changed: a file once per name between barriers (a few thousand
    /// names at most: past that, reporting again is only a little more work); a folder every
    /// time, as whoever hears of it looks whether it is there now, and a folder made again after
    /// that look must not go unheard.
    func reportIgnored(_ path: String, isDirectory: Bool) {
        if ignoredSinceBarrier.count >= 4096 { ignoredSinceBarrier.removeAll() }
        guard isDirectory || ignoredSinceBarrier.insert(path) else { return }
        emit(.ignoredChanged(path: path, isDirectory: isDirectory))
    }

    /// A barrier passes: the next change of each ignored name is reported again.
    func barrierPassed() { ignoredSinceBarrier.removeAll() }

    /// `node` is another program's private directory: no more watches, nothing more reported.
    func dropPrivate(_ node: DirectoryNode) {
        let path = node.relativePath
        dropSubtree(node)
        emit(.directoryIgnored(path: path))
    }

    /// Directories moved away whose destination never showed up left the tree: drop them.
    func finishPendingMoves() {
        guard !pendingMoves.isEmpty else { return }
        let moves = pendingMoves.values.sorted { $0.path < $1.path }
        pendingMoves.removeAll()
        for move in moves {
            dropSubtree(move.node)
            emit(.directoryRemoved(path: move.path))
        }
    }

    /// Whether `node` hangs from the root, rather than from a directory moved away.
    func isAttached(_ node: DirectoryNode) -> Bool {
        var current = node
        while let parent = current.parent { current = parent }
        return current === tree
    }

    // MARK: - Watches

    /// Nodes by their kernel watch, for this tree only.
    var nodeByWatch: [Int32: DirectoryNode] = [:]
    /// Why the root could not be watched, when it could not.
    var rootWatchError: InotifyError?

    /// Watches `node`'s directory; records it as unwatched when the kernel refuses.
    func watch(_ node: DirectoryNode, path: String) {
        do throws(Errno) {
            record(.success(try instance.addWatch(absolutePath: absolutePath(path))), for: node)
        } catch {
            record(.failure(error), for: node)
        }
    }

    /// Takes the outcome of watching `node`'s directory into the tree.
    func record(_ watch: Result<Int32, Errno>, for node: DirectoryNode) {
        do {
            let wd = try watch.get()
            if let old = node.wd, old != wd { forgetWatch(of: node, removingWatch: true) }
            node.wd = wd
            nodeByWatch[wd] = node
            registry.claim(wd, for: number)
            if !unwatched.isEmpty { unwatched[ObjectIdentifier(node)] = nil }
        } catch {
            unwatched[ObjectIdentifier(node)] = node
            if error == .noSpace {
                if node === tree { rootWatchError = .watchLimitReached(path: root, limit: KernelLimits.maxUserWatches ?? 0) }
                reportWatchLimitOnce()
            } else if node === tree {
                rootWatchError = .watchFailed(path: root, error)
            } else if error != .noSuchFileOrDirectory, error != .notDirectory,
                reportedBlind.insert(ObjectIdentifier(node)).inserted
            {
                // A directory gone (moved on, removed) before its watch is news of its own, not a
                // blind spot.
                emit(.watchBlind(path: node.relativePath, reason: error))
            }
        }
    }

    private func reportWatchLimitOnce() {
        guard !hasReportedWatchLimit else { return }
        hasReportedWatchLimit = true
        pendingWatchLimitReport = true
    }

    /// Set during a scan; the event is emitted once the scan knows how many directories it missed.
    var pendingWatchLimitReport = false
    /// When the unwatched directories were last listed (ns since the epoch).
    var lastUnwatchedScan: Int64?

    func forgetWatch(of node: DirectoryNode, removingWatch: Bool) {
        guard let wd = node.wd else { return }
        node.wd = nil
        // After a missed rename the same watch may already belong to the directory's new node.
        guard nodeByWatch[wd] === node else { return }
        if removingWatch { instance.removeWatch(wd) }
        registry.release(wd)
        nodeByWatch[wd] = nil
    }

    func forget(_ node: DirectoryNode, removingWatch: Bool) {
        forgetWatch(of: node, removingWatch: removingWatch)
        unwatched[ObjectIdentifier(node)] = nil
        if !reportedBlind.isEmpty { reportedBlind.remove(ObjectIdentifier(node)) }
    }

    /// Removes a subtree from the tree along with its watches.
    func dropSubtree(_ node: DirectoryNode) {
        for each in node.subtree { forget(each, removingWatch: true) }
        node.detach()
    }
}
