/// When a dirty buffer is saved: the autosave window as a pure state machine.
///
/// The first edit after clean opens the window; every further edit pushes the save to `delay`
/// after the latest edit, but never later than `maxDelay` after the first unsaved edit, so
/// continuous typing still saves. A failed save retries with backoff (100 ms doubling to 30 s)
/// and edits do not hurry a retry. No clock inside: callers pass the time and sleep until
/// `deadline` themselves.
struct AutosaveSchedule<Instant: InstantProtocol>: Sendable where Instant.Duration == Duration, Instant: Sendable {
    let delay: Duration
    let maxDelay: Duration
    private(set) var firstUnsavedEdit: Instant?
    private(set) var lastEdit: Instant?
    private(set) var retryAt: Instant?
    /// The first unsaved edit of the save in flight, for when that save finds the file changed.
    private var savingSince: Instant?
    /// Consecutive failed saves.
    private(set) var failures = 0

    static var firstRetry: Duration { .milliseconds(100) }
    static var longestRetry: Duration { .seconds(30) }

    init(delay: Duration, maxDelay: Duration) {
        self.delay = delay
        self.maxDelay = max(delay, maxDelay)
    }

    /// The next save is due then; nil while there is nothing to save.
    var deadline: Instant? {
        if let retryAt { return retryAt }
        guard let firstUnsavedEdit, let lastEdit else { return nil }
        return min(lastEdit.advanced(by: delay), firstUnsavedEdit.advanced(by: maxDelay))
    }

    /// An accepted edit left the buffer dirty.
    mutating func edited(at now: Instant) {
        if firstUnsavedEdit == nil { firstUnsavedEdit = now }
        lastEdit = now
    }

    /// The buffer is clean (edited back, saved, reloaded): nothing is due.
    mutating func cleaned() {
        firstUnsavedEdit = nil
        lastEdit = nil
        retryAt = nil
        failures = 0
    }

    /// A save took its snapshot: edits from now on open a new window.
    mutating func saveStarted() {
        savingSince = firstUnsavedEdit
        firstUnsavedEdit = nil
        lastEdit = nil
        retryAt = nil
    }

    /// The save found the file changed under it and turned into a merge: its edits are still
    /// unsaved, and their wait still counts from their first edit — a file written to all the
    /// time must not push its save back for ever.
    mutating func saveFoundFileChanged(at now: Instant) {
        if let savingSince { firstUnsavedEdit = min(firstUnsavedEdit ?? savingSince, savingSince) }
        edited(at: now)
    }

    /// The next save is due at `instant`, sooner than the window would have it.
    mutating func retry(at instant: Instant) {
        retryAt = instant
    }

    /// The save landed; when edits arrived meanwhile their window is already open.
    mutating func saveSucceeded() {
        failures = 0
        retryAt = nil
    }

    /// The save failed: the next attempt waits, and the wait doubles with each failure.
    ///
    /// - Returns: when the retry is due.
    @discardableResult
    mutating func saveFailed(at now: Instant) -> Instant {
        failures += 1
        let retry = now.advanced(by: Self.backoff(afterFailures: failures))
        retryAt = retry
        return retry
    }

    /// 100 ms, 200 ms, 400 ms, … capped at 30 s.
    static func backoff(afterFailures failures: Int) -> Duration {
        var wait = firstRetry
        for _ in 1..<max(failures, 1) {
            wait = wait * 2
            if wait >= longestRetry { return longestRetry }
        }
        return min(wait, longestRetry)
    }
}
