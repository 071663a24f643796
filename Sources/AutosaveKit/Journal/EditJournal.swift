import ByteNames
import FoundationEssentials
import Glibc
import SystemPackage

/// The edits clients were told are accepted, kept on disk until they are saved, so a crash
/// loses none of them.
///
/// Appends are written in order; with `fsync` on, `append` returns once the record is durable,
/// and appends that arrive while an fsync runs share the next one (group commit). Records of
/// revisions already saved are obsolete; the journal rewrites itself without them once they
/// dominate, so it never grows without bound.
public actor EditJournal {
    /// What `open` found: records not yet saved, and how much of a torn tail it dropped.
    public struct Recovery: Sendable, Equatable {
        /// The latest unsaved record per path, in path order.
        public var records: [JournalRecord]
        /// Bytes of a record cut short by a crash, ignored and truncated.
        public var tornBytes: Int
        /// Edits records that did not fit the revision before them: each path is recovered as it
        /// was before the broken record, and the journal as it was is kept in `keptAs`.
        public var brokenChains: [BrokenChain] = []
        /// Where the journal as it was is kept when it had broken chains.
        public var keptAs: String?
        /// What `open` found when a power cut left the journal without a whole header.
        public var headerLoss: HeaderLoss?

        /// A journal file without a whole header: a cut stopped its first write part-way, or its
        /// size reached the disk before its bytes did. It held no record; it was started anew.
        public struct HeaderLoss: Sendable, Equatable {
            /// How long the file was.
            public var bytes: Int
            /// Where its bytes are kept, when bytes other than NULs followed the lost header.
            public var keptAs: String?
        }
    }

    /// An `.edits` record that could not be replayed: what is known about it.
    public struct BrokenChain: Sendable, Equatable {
        public var path: String
        public var revision: Int
        public var reason: String
    }

    public nonisolated let directory: String
    /// Whether records are fsync'd before `waitUntilDurable` returns (`journal.fsync`).
    let isDurable: Bool
    private var file: FileDescriptor
    private var size: Int
    /// The newest unsaved record per path; what a rewrite keeps.
    private var live: PathMap<JournalRecord> = [:]
    private var liveBytes = 0
    /// Bytes of `.edits` records written per path since its last full record: once they pass
    /// the content's size, the next record is a full one (recovery never replays more than that).
    private var chainBytes: PathMap<Int> = [:]
    /// The copies of the versions chains of edits stand on (in `bases/`).
    private var pins: BasePins
    /// The change ids of the latest edits, every path's, oldest first: kept across saves,
    /// rewrites and restarts, so that a client's retry after a crash is still applied once.
    private var changeIDs: RecentChangeIDs
    /// Per path, the digests of the versions its buffer's saves were about to write since its
    /// records were last obsolete (`willSave`), the latest `SavesBegun.limit`.
    private var savesBegun = SavesBegun()

    private var appended = 0
    private var synced = 0
    private var isSyncing = false
    private var syncWaiters: [(sequence: Int, continuation: CheckedContinuation<Result<Void, JournalError>, Never>)] = []

    /// A chain stands on a pinned copy only when the text is this large: a pin costs a copy of the
    /// file once (and a second file to fsync), which only pays when the journal would otherwise
    /// take that copy again and again as the chain's full records.
    static var pinnedBaseSize: Int { 1 << 20 }

    /// Whether `path`'s chain of edits stands on a pinned file.
    public func isPinned(_ path: String) -> Bool { pins.isPinned(path) }

    /// Rewrites happen once the file is this large and mostly obsolete.
    static var compactionThreshold: Int { 1 << 20 }

    var path: String { directory + "/journal.log" }
    static func basesDirectory(_ directory: String) -> String { directory + "/bases" }

    init(
        directory: String, isDurable: Bool, file: FileDescriptor, size: Int, live: [JournalRecord],
        changeIDs: RecentChangeIDs = RecentChangeIDs(), savesBegun: SavesBegun = SavesBegun()
    ) {
        self.directory = directory
        self.isDurable = isDurable
        self.file = file
        self.size = size
        self.pins = BasePins(directory: Self.basesDirectory(directory))
        self.changeIDs = changeIDs
        self.savesBegun = savesBegun
        for record in live {
            self.live[record.path] = record
            liveBytes += record.text.count + record.path.utf8.count
        }
    }

    deinit {
        // A journal let go (a workspace replaced, a test done) gives its descriptor back.
        try? file.close()
    }

    /// Appends an accepted edit; returns once it is durable (when `fsync` is on).
    ///
    /// - Throws: `JournalError.system` when it cannot be written or synced: the edit must then be
    ///   refused, since it would not survive a crash.
    public func append(_ record: JournalRecord) async throws(JournalError) {
        try await waitUntilDurable(write(record))
    }

    /// Writes an accepted edit without waiting for it to be durable; records keep the order of
    /// these calls. Pass the returned number to `waitUntilDurable` before acknowledging the edit.
    ///
    /// - Throws: `JournalError.system` when it cannot be written.
    ///
    /// A record that carries `splices` of the revision just before it, when the journal holds
    /// that revision from the same buffer, is written as just those splices (an `.edits`
    /// record): a keystroke in a 10 MB file costs bytes, not 10 MB. Once the splices written
    /// since the last full record pass the content's size, a full record is written again, so
    /// the journal holds at most about twice the content per file. Recovery replays each record
    /// onto a rope in O(log n), so a long chain costs recovery no copy of the file.
    public func write(_ record: JournalRecord) throws(JournalError) -> Int {
        if let id = record.changeID { changeIDs.append(id, for: record.path) }
        // Two edits of one buffer may reach the journal out of order (each hops here on its
        // own): the newer revision, already written, holds the older one's edit too. (The same
        // revision again, whole, ends a chain: that one is written.)
        if let previous = live[record.path], record.source != nil, previous.source == record.source,
            previous.revision > record.revision || (previous.revision == record.revision && record.splices != nil)
        {
            // Its change id is not in the newer record: it must outlive a crash all the same.
            guard let id = record.changeID else { return appended }
            let ids = JournalRecord.changeIDs([id], of: record.path)
            try writeRecord(JournalFormat.head(of: ids), ids.text)
            appended += 1
            return appended
        }
        var full = record
        full.splices = nil
        full.editedBase = nil
        if let splices = record.splices, record.kind == .write {
            let cost = splices.reduce(0) { $0 + 20 + $1.text.count }
            if let previous = live[record.path], previous.kind == .write, previous.revision == record.revision - 1,
                record.source != nil, previous.source == record.source
            {
                let chain = chainBytes[record.path, default: 0]
                if chain + cost <= record.text.count {
                    return try writeDelta(record.asEdits(splices), chainBytes: chain + cost, full: full)
                }
            } else if let base = record.editedBase, let digest = record.baseDigest, record.text.count >= Self.pinnedBaseSize,
                cost <= record.text.count, pins.pin(base, path: record.path, digest: digest, isDurable: isDurable)
            {
                // A clean file's first edit: the chain stands on a copy of the file as the buffer read it.
                return try writeDelta(record.asEdits(splices, onBase: true), chainBytes: cost, full: full)
            }
        }
        try writeRecord(JournalFormat.head(of: full), full.text)
        chainBytes[record.path] = nil
        appended += 1
        pins.release(record.path, after: isDurable ? appended : nil)
        remember(full)
        return appended
    }

    /// Writes a chain's `.edits` or `.baseEdits` record; `full` is what `live` keeps of it.
    private func writeDelta(_ delta: JournalRecord, chainBytes bytes: Int, full: JournalRecord) throws(JournalError) -> Int {
        try writeRecord(JournalFormat.head(of: delta), delta.text)
        chainBytes[delta.path] = bytes
        appended += 1
        remember(full)
        return appended
    }

    /// Returns once the record `write` numbered `sequence` is durable (at once when `fsync` is
    /// off). Records written meanwhile share the same fsync (group commit).
    ///
    /// - Throws: `JournalError.system` when the fsync failed.
    public func waitUntilDurable(_ sequence: Int) async throws(JournalError) {
        guard isDurable, sequence > synced else { return }
        let result = await withCheckedContinuation { continuation in
            syncWaiters.append((sequence, continuation))
            startSyncIfIdle()
        }
        try result.get()
    }

    /// Notes that `path` is on disk up to `revision`: its older records are obsolete.
    ///
    /// - Parameter source: the buffer that saved it: records of another buffer at the path (a
    ///   rename put it there meanwhile) are not touched.
    /// - Throws: `JournalError.system` when the marker cannot be written (the saved edit may then
    ///   come back after a crash, which is harmless).
    public func markSaved(_ path: String, revision: Int, source: UUID? = nil) async throws(JournalError) {
        guard let record = live[path], record.revision <= revision, source == nil || record.source == source else { return }
        savesBegun.forget(path)
        live[path] = nil
        chainBytes[path] = nil
        liveBytes -= record.text.count + record.path.utf8.count
        let saved = JournalRecord(kind: .saved, path: path, revision: revision)
        try writeRecord(JournalFormat.head(of: saved), saved.text)
        if let pin = pins.detach(path) {
            // Until the marker is durable, recovery still needs the pin (or would call the chain
            // broken though its edits are on disk). Detached first: an edit arriving during the
            // fsync may start a new chain on a pin of its own, which must stay.
            if isDurable { try await syncNow() }
            pins.discard(pin)
        }
        // A lost marker only means the same bytes are recovered and found already on disk.
        if size > Self.compactionThreshold && size > 4 * (liveBytes + JournalFormat.headerSize) {
            try await compact()
        }
    }

    /// Notes, before a save of `path` writes anything, the version it is about to write: after a
    /// crash at any moment of the save, recovery knows that the file may hold that version, which
    /// is the buffer's own (an edit taken while the save was written stands on it), and compares
    /// rather than keeping both. Not waited for: losing it to a power cut only costs a conflict
    /// copy that was not needed.
    ///
    /// - Parameter digest: `ContentDigest` of the bytes the save writes.
    /// - Throws: `JournalError.system` when it cannot be written (the save goes on).
    public func willSave(_ path: String, revision: Int, digest: UInt64) throws(JournalError) {
        let record = JournalRecord(kind: .saving, path: path, revision: revision, baseDigest: digest)
        try writeRecord(JournalFormat.head(of: record), record.text)
        savesBegun.append(digest, revision: revision, for: path)
    }

    /// The change ids the journal remembers for `path` (of this run's edits and of earlier runs'),
    /// oldest first: a buffer opened on `path` applies none of them again.
    public func changeIDs(of path: String) -> [UUID] { changeIDs.ids(of: path) }

    /// Appends one encoded record (its head, then its content), or nothing at all.
    ///
    /// A write cut short (the disk filled up) is cut off again, so the records after it are not
    /// hidden behind a torn one at the next start. A journal whose file was deleted (its state
    /// directory removed while the agent ran) is written anew first, with every unsaved record.
    private func writeRecord(_ head: [UInt8], _ content: TextRope) throws(JournalError) {
        // Looking costs two stats: once per group commit when durable (`startSyncIfIdle`),
        // else every so many records. Whatever went to a detached file is rewritten from `live`.
        recordsSinceLook += 1
        if !isDurable, recordsSinceLook >= Self.recordsBetweenLooks { try recreateIfDeleted() }
        do {
            _ = try file.writeAll(head)
            try file.writeAll(content)
        } catch {
            _ = try? file.resize(to: Int64(size))
            _ = try? file.seek(offset: Int64(size), from: .start)
            throw .system(path: path, operation: "append to", error as? Errno ?? .ioError)
        }
        size += head.count + content.count
    }

    /// Whether the open file is no longer the one at `path` (deleted, or moved away with its
    /// directory): appending to it would not be found after a crash.
    private var isDetached: Bool {
        guard let open = Fingerprint.of(descriptor: file.rawValue) else { return false }
        // The journal is never a link: lstat is stat here.
        guard let named = Fingerprint.of(path) else { return true }
        return open.device != named.device || open.inode != named.inode
    }

    /// How many times the journal was written anew because its file had been deleted.
    public private(set) var recreatedCount = 0

    /// Makes the journal's directory again and rewrites the unsaved records into a new file.
    ///
    /// - Throws: `JournalError.system` when the directory or the file cannot be made.
    public func recreateIfDeleted() throws(JournalError) {
        recordsSinceLook = 0
        if isDetached { try recreate() }
    }

    /// Records written since the last look at whether the file is still the journal's.
    private var recordsSinceLook = 0
    /// How often an unsynced journal looks whether its file was deleted.
    static var recordsBetweenLooks: Int { 64 }

    private func recreate() throws(JournalError) {
        try Self.makeDirectory(directory)
        try rewrite()
        recreatedCount += 1
    }

    /// The journal's size on disk, in bytes.
    public var byteCount: Int { size }

    private func remember(_ record: JournalRecord) {
        if let old = live[record.path] { liveBytes -= old.text.count + old.path.utf8.count }
        live[record.path] = record
        liveBytes += record.text.count + record.path.utf8.count
    }

    // MARK: - Group commit

    /// Makes everything written so far durable, outside the group commit (rare: a save that
    /// ends a chain standing on a pinned base).
    private func syncNow() async throws(JournalError) {
        try await Self.sync(file, path: path).get()
    }

    /// fsyncs `file` off the cooperative pool, after the base copies `copies` (in `bases`) and
    /// their folder: an edit acknowledged after it stands on a durable copy.
    private static func sync(
        _ file: FileDescriptor, path: String, copies: [FileDescriptor] = [], in bases: String = ""
    ) async -> Result<Void, JournalError> {
        await BlockingIO.run { () -> Result<Void, JournalError> in
            do throws(JournalError) {
                try BasePins.sync(copies, in: bases)
                do throws(Errno) { try file.sync() } catch { throw .system(path: path, operation: "fsync", error) }
                return .success(())
            } catch {
                return .failure(error)
            }
        }
    }

    private func startSyncIfIdle() {
        guard !isSyncing, let _ = syncWaiters.first else { return }
        if recordsSinceLook > 0 {
            do { try recreateIfDeleted() } catch {
                let waiting = syncWaiters
                syncWaiters.removeAll()
                for waiter in waiting { waiter.continuation.resume(returning: .failure(error)) }
                return
            }
        }
        isSyncing = true
        let target = appended
        let file = self.file
        let path = self.path
        let copies = pins.takeUnsynced()
        let bases = Self.basesDirectory(directory)
        // Owned by the journal (one at a time: isSyncing); never cancelled: finishSync takes its result.
        Task {
            let result = await Self.sync(file, path: path, copies: copies, in: bases)
            self.finishSync(through: target, result)
        }
    }

    private func finishSync(through target: Int, _ result: Result<Void, JournalError>) {
        isSyncing = false
        if case .success = result {
            synced = max(synced, target)
            pins.removeReleased(through: synced)
        }
        let ready = syncWaiters.filter { $0.sequence <= target }
        syncWaiters.removeAll { $0.sequence <= target }
        for waiter in ready { waiter.continuation.resume(returning: result) }
        startSyncIfIdle()
    }

    // MARK: - Compaction

    /// Rewrites the journal with only the unsaved records, the remembered change ids and the saves
    /// begun under unsaved records: a new file, synced, renamed over.
    private func compact() async throws(JournalError) {
        try rewrite()
    }

    private func rewrite() throws(JournalError) {
        var bytes = JournalFormat.header()
        for record in changeIDs.records() { bytes += JournalFormat.encode(record) }
        for key in live.sortedKeys { bytes += JournalFormat.encode(live[key]!) }
        for record in savesBegun.records(of: live.sortedKeys) { bytes += JournalFormat.encode(record) }
        let fresh = try Self.replaceFile(at: path, in: directory, with: bytes)
        try? file.close()
        file = fresh
        size = bytes.count
        // Every live record was just written whole, and is durable.
        chainBytes = [:]
        pins.removeAll()
    }
}
