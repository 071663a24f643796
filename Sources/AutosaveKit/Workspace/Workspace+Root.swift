import ByteNames
import Glibc
import Logging

/// What the workspace does when the ground moves: its state directory deleted, its root renamed
/// or deleted.
extension Workspace {
    /// Someone deleted the state directory while the agent ran: the journal is written again
    /// with every unsaved edit (until then, edits lived only in the buffers), and the agent is told
    /// to make its lock and socket again.
    func remakeStateDirectory(_ directory: String) async {
        // A `rm -rf` of the whole project takes the state directory before the root: making it
        // again meanwhile would make that removal fail. Wait until deletions stop, then only if
        // the root is still there (its own removal is handled apart).
        let clock = context.clock
        let started = clock.now
        while true {
            try? await clock.sleep(for: Self.quietBeforeRemaking)
            var status = stat()
            guard lstat(root, &status) == 0 else {
                await watcher.checkRoot()
                return
            }
            guard let last = await watcher.lastRemovalSeen, last.duration(to: clock.now) < Self.quietBeforeRemaking,
                started.duration(to: clock.now) < .seconds(10)
            else { break }
        }
        logger.warning(
            "state-dir-lost",
            metadata: [
                "path": "\(directory)", "error": "the state directory was deleted while the agent ran",
                "next": "made it again: the journal is rewritten with every unsaved edit, the lock and the socket are made again",
            ])
        if let journal = context.journal {
            do { try await journal.recreateIfDeleted() } catch {
                logger.error(
                    "journal-failed",
                    metadata: ["error": "\(error)", "next": "unsaved edits are in the buffers and are saved as usual, but would not survive a crash"])
            }
        }
        stateDirectoryRecreationsContinuation.yield()
    }

    /// How long nothing must be deleted before a lost state directory is made again.
    static var quietBeforeRemaking: Duration { .milliseconds(300) }

    /// The root itself was deleted: no save can land. Every unsaved edit is written outside the
    /// project (`OrphanedEdits`), each logged, and the agent stops without creating anything
    /// where the root was.
    func orphanUnsavedEdits() async {
        guard !isRootRemoved else { return }
        isRootRemoved = true
        let orphans = OrphanedEdits(root: root)
        var kept = 0
        var lost = 0
        for key in buffers.sortedKeys {
            guard let buffer = buffers[key] else { continue }
            guard await buffer.abandon(), let content = await buffer.content else { continue }
            do {
                let copy = try await BlockingIO.run { () throws(WriteError) -> String in try orphans.keep(content, of: key) }
                kept += 1
                logger.error("orphaned", metadata: ["path": "\(key)", "copy": "\(copy)", "bytes": "\(content.count)"])
            } catch {
                lost += 1
                logger.critical(
                    "orphan-failed",
                    metadata: ["path": "\(key)", "error": "\(error)", "next": "this unsaved edit is lost with the root"])
            }
        }
        buffers.removeAll()
        logger.error(
            "root-removed",
            metadata: [
                "root": "\(root)", "error": "the project folder was deleted while the agent ran",
                "orphaned": "\(kept)", "lost": "\(lost)",
                "next": kept > 0 ? "unsaved edits are in \(orphans.directory); exiting with status 1" : "exiting with status 1",
            ])
        await watcher.stop()
    }

    /// The root was renamed: this workspace's paths all lead nowhere now. It takes every unsaved
    /// edit out of its buffers, saves nothing, and stops; the journal moved with the state
    /// directory, so a crash meanwhile loses nothing either.
    func handOver(movedTo path: String) async {
        guard movedRoot == nil, !isRootRemoved else { return }
        movedRoot = path
        for key in buffers.sortedKeys {
            guard let buffer = buffers[key] else { continue }
            if await buffer.abandon() { unsavedEdits.append(await buffer.journalRecord()) }
        }
        buffers.removeAll()
        await watcher.stop()
    }
}
