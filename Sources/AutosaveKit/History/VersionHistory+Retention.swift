import AutosaveHistory
import Logging
import Synchronization

extension VersionHistory {
    /// Runs one pruning pass (`history.maxAgeDays`, `history.maxBytes`) a step at a time on
    /// `BlockingIO`: between two steps the store is free, so recordings handed over meanwhile are
    /// written then. Logs `history-pruned` when it is done, or `history-failed`.
    ///
    /// - Parameter shouldStop: asked before each step: true ends the pass where it is (the agent
    ///   stops); what was done stays done.
    /// - Returns: what the pass did; nil when it failed (logged).
    @discardableResult
    func prune(_ policy: RetentionPolicy, shouldStop: @escaping @Sendable () -> Bool = { false }) async -> PruneReport? {
        let started = ContinuousClock.now
        let database = self.database
        var pass = PrunePass(policy: policy, now: now())
        do throws(HistoryError) {
            while !pass.isFinished, !shouldStop() {
                pass = try await BlockingIO.run { [pass] () throws(HistoryError) -> PrunePass in
                    var pass = pass
                    try database.withStore { store throws(HistoryError) in try store.advance(&pass) }
                    return pass
                }
            }
        } catch {
            // The database closed under a pass the stop cut short is no failure.
            if !shouldStop() {
                logger.warning(
                    "history-failed",
                    metadata: ["error": "\(error)", "next": "pruning stopped there; the next pass tries again, and every version kept reads as before"])
            }
            return nil
        }
        let report = pass.report
        guard pass.isFinished else { return report }
        logger.info(
            "history-pruned",
            metadata: [
                "versions": "\(report.versions)", "contents": "\(report.contents)", "bytes": "\(report.bytesAfter)",
                "freed": "\(report.bytesBefore - report.bytesAfter)", "ms": "\(((ContinuousClock.now - started).milliseconds * 10).rounded() / 10)",
            ])
        return report
    }

    /// Removes every version of `path` (and of every path below it) and their bytes from the
    /// database's files, once everything handed over before the call is written. Logs
    /// `history-forgot`.
    ///
    /// - Throws: `HistoryQueryError.noVersions` when history has none, `.store` when the database fails.
    public func forget(_ path: String) async throws(HistoryQueryError) -> ForgetReport {
        await caughtUp()
        let database = self.database
        let report: ForgetReport
        do throws(HistoryError) {
            report = try await BlockingIO.run { () throws(HistoryError) -> ForgetReport in
                try database.withStore { store throws(HistoryError) in try store.forget(path: path) }
            }
        } catch {
            logger.warning(
                "history-failed",
                metadata: ["path": "\(path)", "error": "\(error)", "next": "run `autosave history --forget` again; the versions already forgotten stay forgotten"])
            throw .store(error)
        }
        guard report.versions > 0 else { throw .noVersions(path: path) }
        logger.info(
            "history-forgot",
            metadata: [
                "path": "\(path)", "versions": "\(report.versions)", "contents": "\(report.contents)",
                "shared": "\(report.sharedContents)", "bytes": "\(report.bytesAfter)",
            ])
        return report
    }
}

extension Configuration.History {
    /// `maxAgeDays` and `maxBytes` as the store's policy.
    public var retention: RetentionPolicy {
        RetentionPolicy(maxAgeDays: maxAgeDays, maxBytes: Int64(maxBytes))
    }
}

/// Hears of each batch of recordings history wrote, and the database's size after it: how
/// retention knows there is something to prune, and that it is due sooner.
final class HistoryWrites: Sendable {
    private let observer = Mutex<(@Sendable (_ bytesOnDisk: Int64) -> Void)?>(nil)

    /// From now on `body` is called after each batch (in place of any observer before).
    func observe(_ body: @escaping @Sendable (_ bytesOnDisk: Int64) -> Void) {
        observer.withLock { $0 = body }
    }

    /// A batch was written; the database is now `bytesOnDisk` large.
    func wrote(bytesOnDisk: Int64) {
        observer.withLock { $0 }?(bytesOnDisk)
    }
}
