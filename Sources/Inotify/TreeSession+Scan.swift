import Glibc

extension TreeSession {
    /// Walks the tree below `start`, watching each directory before listing it, and reconciles the
    /// nodes with what is on disk: new directories get nodes, vanished ones are dropped.
    ///
    /// Used for the first walk, for directories that appear, and to rebuild after an overflow.
    func scanTree(from start: DirectoryNode, statFiles: Bool, unseenSince: Int64?) -> DirectoryScan {
        let started = Self.monotonicMilliseconds()
        var files: [DirectoryScan.File] = []
        var directories = 0
        var stack = [(start, start.relativePath)]
        while let (node, path) = stack.popLast() {
            directories += 1
            watch(node, path: path)
            let children = list(node, path: path, statFiles: statFiles, into: &files)
            stack.append(contentsOf: children)
        }
        return makeScan(
            scope: [start.relativePath], isRecursive: true, files: files, directories: directories,
            unseenSince: unseenSince, started: started)
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
        let nodes = unwatched.values.map { ($0, $0.relativePath) }.sorted { $0.1 < $1.1 }
        guard !nodes.isEmpty else { return }
        let started = Self.monotonicMilliseconds()
        let since = lastUnwatchedScan ?? unseenSince
        lastUnwatchedScan = DirectoryListing.wallClockNanoseconds()
        var files: [DirectoryScan.File] = []
        var directories = 0
        for (node, path) in nodes {
            directories += 1
            watch(node, path: path)
            for (child, childPath) in list(node, path: path, statFiles: true, into: &files) where child.wd == nil {
                // A directory that appeared since the last scan: walk it like any new directory.
                guard unwatched[ObjectIdentifier(child)] == nil else { continue }
                let scan = scanTree(from: child, statFiles: true, unseenSince: since)
                files += scan.files
                directories += scan.directories
                _ = childPath
            }
        }
        emit(
            .rescanned(
                makeScan(
                    scope: nodes.map(\.1), isRecursive: false, files: files, directories: directories,
                    unseenSince: since, started: started)))
    }

    /// Lists one directory: files go to `files`, child directories are returned (existing nodes
    /// reused, new ones created) and children that vanished are dropped.
    private func list(
        _ node: DirectoryNode, path: String, statFiles: Bool, into files: inout [DirectoryScan.File]
    ) -> [(DirectoryNode, String)] {
        guard let entries = try? DirectoryListing.entries(of: absolutePath(path), statFiles: statFiles) else {
            // It vanished or cannot be read: the parent's event (or the next rescan) settles it.
            return []
        }
        var children: [(DirectoryNode, String)] = []
        var seen = Set<String>()
        for entry in entries {
            let childPath = path.isEmpty ? entry.name : path + "/" + entry.name
            guard !isIgnored(childPath, isDirectory: entry.isDirectory) else { continue }
            if entry.isDirectory {
                seen.insert(entry.name)
                let child = node.children[entry.name] ?? DirectoryNode(name: entry.name, parent: node)
                node.children[entry.name] = child
                children.append((child, childPath))
            } else {
                files.append(DirectoryScan.File(path: childPath, changeTime: entry.changeTime))
            }
        }
        for (name, child) in node.children where !seen.contains(name) {
            dropSubtree(child)
        }
        return children
    }

    private func makeScan(
        scope: [String], isRecursive: Bool, files: [DirectoryScan.File], directories: Int,
        unseenSince: Int64?, started: Double
    ) -> DirectoryScan {
        let unwatchedPaths = unwatched.values.map(\.relativePath).sorted()
        if pendingWatchLimitReport {
            pendingWatchLimitReport = false
            emit(.watchLimit(limit: KernelLimits.maxUserWatches ?? 0, unwatched: unwatchedPaths.count))
        }
        return DirectoryScan(
            scope: scope, isRecursive: isRecursive, files: files, directories: directories,
            watches: nodeByWatch.count, unwatched: unwatchedPaths, unseenSince: unseenSince,
            milliseconds: Self.monotonicMilliseconds() - started)
    }

    static func monotonicMilliseconds() -> Double {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return Double(now.tv_sec) * 1000 + Double(now.tv_nsec) / 1_000_000
    }
}
