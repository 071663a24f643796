/// "What changed since?" for any client: `changes`, change subscriptions and git's fsmonitor hook.
extension Workspace {
    /// The paths changed since `since` that match one of `globs` (all when nil).
    ///
    /// Answered once every kernel event from before the call is taken in and (unless
    /// `includeUnsettled`) every settle window they opened has closed, so a write made just
    /// before the call is in the answer.
    public func changes(
        since: ChangeClock?, globs: [PathGlob]?, includeUnsettled: Bool = false, includeIgnored: Bool = false
    ) async -> ChangesSince {
        if !includeUnsettled { await watcher.syncAndSettle() }
        return await watcher.changes(since: since, includeUnsettled: includeUnsettled, includeIgnored: includeIgnored) {
            Self.matches($0, globs)
        }
    }

    /// The changes recorded since `since`, as they stand, without waiting: what a change
    /// subscriber is sent when `changeSignals` says there is news.
    public nonisolated func recordedChanges(since: ChangeClock?, globs: [PathGlob]?) async -> ChangesSince {
        await watcher.recordedChanges(since: since) { Self.matches($0, globs) }
    }

    /// The clock as of now: where a change subscription without `since` starts.
    public nonisolated func changeClock() async -> ChangeClock { await watcher.changeClock }

    /// Signals, coalesced, each time changes are recorded; until `endChangeSignals(id)`.
    public nonisolated func changeSignals() async -> (id: Int, signals: AsyncStream<Void>) { await watcher.changeSignal() }

    /// Ends the signals `changeSignals` handed out as `id`.
    public nonisolated func endChangeSignals(_ id: Int) async { await watcher.endChangeSignal(id) }

    private static func matches(_ change: ChangedPath, _ globs: [PathGlob]?) -> Bool {
        guard let globs else { return true }
        return globs.contains { $0.matches(change.path) }
    }
}
