extension Workspace {
    /// Once `ready` is out, stores every file history has no version of (`HistoryBaseline`), in
    /// the background, until done or until the watcher stops.
    func runBaseline(of history: VersionHistory) async {
        let gate = baselineGate
        guard await gate.waitUntilOpen() else { return }
        // The database opens in the background too: the baseline starts once it is open.
        await history.caughtUp()
        guard history.database.isOpen else { return }
        let watcher = self.watcher
        let clock = context.clock
        let start = clock.now
        let baseline = HistoryBaseline(
            database: history.database, files: history.files, root: root, setting: configuration.configuration.history.baseline,
            logger: logger, now: history.now, elapsed: { start.duration(to: clock.now) }, afterRead: faults.afterBaselineRead)
        let source = HistoryBaseline.FileSource(
            count: { await watcher.knownFileCount },
            folders: { await watcher.knownFolders },
            files: { await watcher.knownFiles(in: $0) })
        await baseline.run(source, isStopping: { gate.isStopping })
        // The baseline is start-up's last work: deciding it (off, on a million files) faulted code
        // back in and freed what it listed, after `ready` had given start-up's pages back (4 MB
        // of the executable's on a million files). Given back again once it is done.
        StartUpPages.giveBack()
    }
}
