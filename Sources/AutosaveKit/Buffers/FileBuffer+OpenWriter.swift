import Logging

extension FileBuffer {
    /// How often an autosave waiting for a writer looks again whether it closed the file (its
    /// close is also an external change, which brings the buffer back here sooner).
    static var writerRecheck: Duration { .milliseconds(100) }

    /// The autosave found the file held open for writing by another process: nothing was written.
    /// It looks again shortly, and writes in place once `maxDelayMs` after the first unsaved edit
    /// has passed; it is logged once per wait (`save-waiting`).
    func waitForWriter(isFirstWait: Bool) {
        let now = context.clock.now
        // The edits are as unsaved as before: their window still counts from their first edit.
        schedule.saveFoundFileChanged(at: now)
        let cap = (schedule.firstUnsavedEdit ?? now).advanced(by: schedule.maxDelay)
        schedule.retry(at: min(now.advanced(by: Self.writerRecheck), cap))
        if isFirstWait {
            let wait = now.duration(to: cap)
            context.logger.info(
                "save-waiting",
                metadata: [
                    "path": "\(path)", "reason": "open-writer", "revision": "\(revision)",
                    "next": "another process has the file open for writing; saving once it closes it, or in place in \(wait.wholeMilliseconds) ms",
                ])
        }
        rescheduleTimer()
    }
}
