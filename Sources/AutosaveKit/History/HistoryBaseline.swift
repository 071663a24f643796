import AutosaveHistory
import Glibc
import Logging
import Synchronization

/// The background pass after `ready` that stores every file under the root once, so that the first
/// outside change to a file no buffer ever read still has the version before it.
///
/// It runs on an `IdleThread` (nice 19, idle I/O), a few folders at a time, and never holds up
/// `ready`, `sync` or the notice of a change: the watcher does not wait for it, and it holds the
/// history database for one file at a time. It resumes across restarts: a file whose device, inode,
/// size, mtime and ctime match the stamp stored with its last version is not read again. A file an
/// outside change reached before the pass did has no earlier version (the docs say so).
///
/// Ordering with the recorder: a file is read without the database, then, holding it, stat'ed
/// again; if it changed in between, the pass leaves it to the watcher, which reports that change
/// and has the recorder store the new bytes. So a baseline never lands after, and on top of, a
/// newer version of the same file.
struct HistoryBaseline: Sendable {
    /// `history.baseline: "auto"` covers trees of at most this many files …
    static let autoFileLimit = 100_000
    /// … holding at most this many bytes in files under `history.maxFileBytes`.
    static let autoByteLimit: Int64 = 2 << 30
    /// Files handed to the idle thread at once.
    static let batchSize = 256
    /// How often a long pass logs how far it got.
    static let progressInterval: Duration = .seconds(5)

    /// Where the pass finds the files: the watcher's known files, a few folders at a time.
    struct FileSource: Sendable {
        var count: @Sendable () async -> Int
        var folders: @Sendable () async -> [String]
        var files: @Sendable (_ in: [String]) async -> [String]
    }

    /// How far the pass got, as `history-baseline` logs it.
    struct Progress: Sendable, Equatable {
        /// Files looked at so far.
        var files = 0
        /// Files the watcher knew when the pass began.
        var of = 0
        /// Files not read because their stamp says they did not change since they were stored.
        var skipped = 0
        /// New versions recorded (a file history already had, byte for byte, records none).
        var versions = 0
        /// Bytes read.
        var bytes: Int64 = 0
    }

    let database: HistoryDatabase
    let files: HistoryFiles
    let root: String
    let setting: Configuration.BaselineSetting
    let logger: Logger
    /// Milliseconds since the Unix epoch: a baseline's version time is its file's mtime, but never later than this.
    let now: @Sendable () -> Int64
    /// Time since the pass began, on the workspace's clock (for `ms=` and the progress lines).
    let elapsed: @Sendable () -> Duration
    /// A fault-injection seam: runs after a file is read and before it is recorded (tests make the race happen there).
    var afterRead: (@Sendable (String) -> Void)? = nil

    /// Runs the pass over `source`'s files until it is done or `isStopping` says the agent stops.
    ///
    /// - Returns: how far it got.
    @discardableResult
    func run(_ source: FileSource, isStopping: @escaping @Sendable () -> Bool) async -> Progress {
        guard setting != .off else { return Progress() }
        let thread = IdleThread()
        let progress = await run(source, on: thread, isStopping: isStopping)
        await thread.shutDown()
        return progress
    }

    private func run(_ source: FileSource, on thread: IdleThread, isStopping: @escaping @Sendable () -> Bool) async -> Progress {
        var progress = Progress(of: await source.count())
        if setting == .auto {
            guard progress.of <= Self.autoFileLimit else {
                logOff(files: progress.of, bytes: nil)
                return progress
            }
            let folders = await source.folders()
            let paths = await source.files(folders)
            let bytes = await thread.run { [files, root] in Self.bytesUnderCap(paths, root: root, limit: files.maxFileBytes) }
            guard bytes <= Self.autoByteLimit else {
                logOff(files: progress.of, bytes: bytes)
                return progress
            }
        }
        log(progress, state: "started")
        var lastLog = elapsed()
        var folders = await source.folders()[...]
        while !folders.isEmpty, !isStopping() {
            var batch: [String] = []
            while batch.count < Self.batchSize, let folder = folders.popFirst() {
                batch += await source.files([folder])
            }
            let outcome = await thread.run { [self, batch] in store(batch, isStopping: isStopping) }
            progress.files += outcome.progress.files
            progress.skipped += outcome.progress.skipped
            progress.versions += outcome.progress.versions
            progress.bytes += outcome.progress.bytes
            if let failure = outcome.failure {
                logger.warning(
                    "history-failed",
                    metadata: [
                        "path": "\(failure.path)", "error": "\(failure.error)",
                        "next": "the baseline stopped; it goes on from where it was at the next start",
                    ])
                log(progress, state: "failed")
                return progress
            }
            if elapsed() - lastLog >= Self.progressInterval {
                lastLog = elapsed()
                log(progress, state: "running")
            }
        }
        log(progress, state: folders.isEmpty ? "done" : "stopped")
        return progress
    }

    // MARK: - On the idle thread

    private struct BatchOutcome: Sendable {
        var progress = Progress()
        var failure: (path: String, error: HistoryError)?
    }

    /// Stores each file of `paths` that history does not have as it is now, `commitSize` files a
    /// transaction: stamps looked up together, files read without the database, then re-stat'ed
    /// and recorded under one commit (one commit a file cost most of the pass's time).
    private func store(_ paths: [String], isStopping: () -> Bool) -> BatchOutcome {
        var outcome = BatchOutcome()
        var start = 0
        while start < paths.count, !isStopping() {
            let chunk = Array(paths[start..<min(paths.count, start + Self.commitSize)])
            start += chunk.count
            do throws(HistoryError) {
                try store(chunk, into: &outcome.progress)
            } catch {
                outcome.failure = (chunk.first ?? "", error)
                return outcome
            }
        }
        do throws(HistoryError) {
            try database.sync()
        } catch {
            outcome.failure = ("", error)
        }
        return outcome
    }

    /// Files recorded in one transaction.
    static let commitSize = 64

    private func store(_ chunk: [String], into progress: inout Progress) throws(HistoryError) {
        let stored = try database.withStore { store throws(HistoryError) -> [FileStamp?] in
            var stamps: [FileStamp?] = []
            for path in chunk { stamps.append(try store.stamp(of: path)) }
            return stamps
        }
        let folders = BaselineFolders(files: files)
        var read: [(path: String, bytes: [UInt8], stamp: FileStamp)] = []
        for (path, stamp) in zip(chunk, stored) {
            progress.files += 1
            if let stamp, stamp == folders.stamp(of: path) {
                progress.skipped += 1
                continue
            }
            guard case .version(let version) = folders.read(path) else { continue }
            progress.bytes += Int64(version.bytes.count)
            afterRead?(path)
            read.append((path, version.bytes, FileStamp(version.fingerprint)))
        }
        guard !read.isEmpty else { return }
        let now = now()
        progress.versions += try database.withStore { store throws(HistoryError) -> Int in
            try store.batch { () throws(HistoryError) -> Int in
                var versions = 0
                for file in read {
                    // Changed since it was read: the watcher reports that change, and the recorder
                    // stores the new bytes; this version must not land after them.
                    guard folders.isInPlace(file.path), folders.stamp(of: file.path) == file.stamp else { continue }
                    let time = min(now, file.stamp.modified / 1_000_000)
                    let input = VersionInput(path: file.path, content: file.bytes, kind: .baseline, who: "external", time: time)
                    if try store.record(input) != nil { versions += 1 }
                    try store.setStamp(file.stamp, for: file.path)
                }
                return versions
            }
        }
    }

    /// The bytes in regular files of `paths` no larger than `limit`: what the pass would read.
    private static func bytesUnderCap(_ paths: [String], root: String, limit: Int) -> Int64 {
        var total: Int64 = 0
        for path in paths {
            var status = stat()
            guard lstat(root + "/" + path, &status) == 0, status.st_mode & S_IFMT == S_IFREG, status.st_size <= limit else {
                continue
            }
            total += Int64(status.st_size)
        }
        return total
    }

    // MARK: - Log

    private func log(_ progress: Progress, state: String) {
        let milliseconds = elapsed().milliseconds
        logger.info(
            "history-baseline",
            metadata: [
                "files": "\(progress.files)", "of": "\(progress.of)", "skipped": "\(progress.skipped)",
                "versions": "\(progress.versions)", "bytes": "\(progress.bytes)", "ms": "\(Int(milliseconds.rounded()))",
                "state": "\(state)",
            ])
    }

    private func logOff(files: Int, bytes: Int64?) {
        let size = bytes.map { " holding \($0 >> 20) MiB under history.maxFileBytes" } ?? ""
        logger.info(
            "history-baseline",
            metadata: [
                "files": "0", "of": "\(files)", "state": "off",
                "next":
                    "the tree has \(files) files\(size), over what history.baseline \"auto\" stores (\(Self.autoFileLimit) files, \(Self.autoByteLimit >> 30) GiB): storing them would read each once at idle priority and keep about their compressed size; set history.baseline to true to do it. Until then, the first outside change to a file no buffer read has no version before it",
            ])
    }
}

extension FileStamp {
    init(_ fingerprint: Fingerprint) {
        self.init(
            device: fingerprint.device, inode: fingerprint.inode, size: fingerprint.size, modified: fingerprint.modified,
            changed: fingerprint.changed)
    }
}
