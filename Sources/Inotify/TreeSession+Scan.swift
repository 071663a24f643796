import ByteNames
import Glibc

extension TreeSession {
    /// Walks the tree below `start`, watching each directory before listing it, and reconciles the
    /// nodes with what is on disk: new directories get nodes, vanished ones are dropped.
    ///
    /// Used for the first walk, for directories that appear, and to rebuild after an overflow.
    func scanTree(from start: DirectoryNode, statFiles: Bool, unseenSince: Int64?) -> DirectoryScan {
        let started = DirectoryListing.monotonicMilliseconds()
        // Before the walk: a start that turns out to be another program's private directory is
        // dropped, and its path would read as the root's.
        let startPath = start.relativePath
        var listings: [DirectoryScan.Listing] = []
        var directories = 0
        // Level by level: a level's directories are watched and listed in parallel, then
        // taken into the tree here, which finds the next level. A big level goes in batches, so
        // that this thread takes in one batch while the next is probed.
        var level = [(start, startPath)]
        while !level.isEmpty {
            directories += level.count
            // Room for the level's watches in one go: a level of 90,000 would grow both tables
            // through a dozen rehashes.
            nodeByWatch.reserveCapacity(nodeByWatch.count + level.count)
            registry.reserve(level.count)
            let batches = stride(from: 0, to: level.count, by: mailbox.probeBatch).map {
                level[$0..<min($0 + mailbox.probeBatch, level.count)]
            }
            var running = probe(batches[0], statFiles: statFiles)
            var next: [(DirectoryNode, String)] = []
            for index in batches.indices {
                let probes = running.results()
                if index + 1 < batches.count { running = probe(batches[index + 1], statFiles: statFiles) }
                for (offset, (node, path)) in batches[index].enumerated() {
                    let probe = probes.take(offset)
                    record(probe.watch, for: node)
                    list(node, path: path, contents: probe.contents, into: &listings, children: &next)
                }
            }
            level = next
        }
        return makeScan(
            scope: [startPath], isRecursive: true, listings: listings, directories: directories,
            unseenSince: unseenSince, started: started)
    }

    /// Directories probed at once: enough to keep the probe threads busy while the batch before
    /// is taken in, few enough that little waits at a level's end. Each batch ends when its
    /// slowest thread does, and starts its threads anew: on the 1M-file tree 4,096 took 839 ms to
    /// set up and 1,230 ms of system CPU, 8,192 786 and 1,165 ms (14 runs each, medians). One set
    /// of threads kept for the whole scan, with 8,192, measured no better (841 ms against 812).
    static var probeBatch: Int { 8_192 }

    private func probe(_ batch: ArraySlice<(DirectoryNode, String)>, statFiles: Bool) -> ProbeRun {
        DirectoryProbe.start(
            batch.map { filter(for: $0.1) },
            instance: instance.shared, statFiles: statFiles)
    }

    /// After the kernel queue overflowed: report it, then rebuild the whole tree from disk.
    func recoverFromOverflow(unseenSince: Int64) {
        finishPendingMoves()
        emit(.overflow)
        emit(.rescanned(scanTree(from: tree, statFiles: true, unseenSince: unseenSince)))
    }

    /// Re-lists the directories that have no watch, trying to watch them again.
    func rescanUnwatched(unseenSince: Int64) {
        finishPendingMoves()
        // Only directories still in the tree: a detached one's path would read from its detached
        // top, the root's own path for that top itself.
        let nodes = unwatched.values.filter(isAttached).map { ($0, $0.relativePath) }.sorted { $0.1 < $1.1 }
        guard !nodes.isEmpty else { return }
        let started = DirectoryListing.monotonicMilliseconds()
        let since = lastUnwatchedScan ?? unseenSince
        lastUnwatchedScan = DirectoryListing.wallClockNanoseconds()
        var listings: [DirectoryScan.Listing] = []
        var directories = 0
        for (node, path) in nodes {
            // Dropped earlier in this loop, below a directory whose listing found it gone; watched
            // again, a vanished directory would be unwatched once more, and for ever.
            guard unwatched[ObjectIdentifier(node)] != nil else { continue }
            directories += 1
            watch(node, path: path)
            let contents = try? DirectoryListing.contents(of: absolutePath(path), statFiles: true, filter: filter(for: path))
            var children: [(DirectoryNode, String)] = []
            list(node, path: path, contents: contents, into: &listings, children: &children)
            for (child, _) in children where child.wd == nil {
                // A directory that appeared since the last scan: walk it like any new directory.
                guard unwatched[ObjectIdentifier(child)] == nil else { continue }
                let scan = scanTree(from: child, statFiles: true, unseenSince: since)
                listings += scan.listings
                directories += scan.directories
            }
        }
        emit(
            .rescanned(
                makeScan(
                    scope: nodes.map(\.1), isRecursive: false, listings: listings, directories: directories,
                    unseenSince: since, started: started)))
    }

    /// Takes one directory's listing into the tree: files go to `listings`, child directories to
    /// `children` (existing nodes reused, new ones created) and children that vanished are dropped.
    private func list(
        _ node: DirectoryNode, path: String, contents: DirectoryContents?, into listings: inout [DirectoryScan.Listing],
        children: inout [(DirectoryNode, String)]
    ) {
        guard let contents else {
            // It vanished or cannot be read: the parent's event (or the next rescan) settles it.
            return
        }
        if node !== tree, contents.hasPrivateMarker {
            dropPrivate(node)
            return
        }
        if collectsLeftovers {
            leftovers += contents.leftovers.map { path.isEmpty ? $0 : path + "/" + $0 }
        }
        for name in contents.ignoredDirectories {
            let ignored = path.isEmpty ? name : path + "/" + name
            // The first walk hands them over in its scan; later ones as they are met.
            if collectsLeftovers { ignoredDirectories.append(ignored) } else { reportIgnored(ignored, isDirectory: true) }
        }
        if node.children.isEmpty {
            // A new directory's children go in at once, sorted once rather than inserted one by one.
            var made: [DirectoryNode] = []
            made.reserveCapacity(contents.directories.count)
            for name in contents.directories {
                let child = DirectoryNode(name: name, parent: node)
                made.append(child)
                children.append((child, path.isEmpty ? name : path + "/" + name))
            }
            if !made.isEmpty { node.children = ChildDirectories(made) }
        } else {
            for name in contents.directories {
                let child: DirectoryNode
                if let known = node.children[name] {
                    child = known
                } else {
                    child = DirectoryNode(name: name, parent: node)
                    node.children[name] = child
                }
                children.append((child, path.isEmpty ? name : path + "/" + name))
            }
        }
        listings.append(DirectoryScan.Listing(directory: path, names: contents.files, changeTimes: contents.changeTimes))
        if node.children.count > contents.directories.count {
            let seen = PathSet(contents.directories)
            for (name, child) in node.children where !seen.contains(name) {
                dropSubtree(child)
            }
        }
    }

    private func makeScan(
        scope: [String], isRecursive: Bool, listings: [DirectoryScan.Listing], directories: Int,
        unseenSince: Int64?, started: Double
    ) -> DirectoryScan {
        let unwatchedPaths = unwatched.values.map(\.relativePath).sorted()
        defer {
            leftovers.removeAll()
            ignoredDirectories.removeAll()
        }
        if pendingWatchLimitReport {
            pendingWatchLimitReport = false
            emit(.watchLimit(limit: KernelLimits.maxUserWatches ?? 0, unwatched: unwatchedPaths.count))
        }
        return DirectoryScan(
            scope: scope, isRecursive: isRecursive, listings: listings,
            fileCount: listings.reduce(0) { $0 + $1.names.count }, directories: directories,
            watches: nodeByWatch.count, unwatched: unwatchedPaths, unseenSince: unseenSince,
            milliseconds: DirectoryListing.monotonicMilliseconds() - started, leftovers: leftovers,
            ignoredDirectories: ignoredDirectories)
    }
}
