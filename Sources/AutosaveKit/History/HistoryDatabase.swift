import ByteNames
import AutosaveHistory
import Synchronization

/// The history database, shared by the recorder and the queries: one `VersionStore` behind a
/// lock, used only from `BlockingIO` threads (SQLite and zstd block).
///
/// It starts unopened: `VersionHistory.run()` opens it in the background, so that checking a
/// large database (reading every page of it, seconds when it is not in the page cache) never
/// holds up `ready`.
final class HistoryDatabase: Sendable {
    /// Where the database is, for messages.
    let path: String
    private let state: Mutex<State>

    private enum State {
        case unopened
        case open(StoreBox)
        /// It could not be opened (logged), or it was closed as the agent stopped.
        case unavailable(reason: String)
    }

    init(path: String) {
        self.path = path
        self.state = Mutex(.unopened)
    }

    /// One open already, with `store` (what `run()` would open; tests hand it in).
    convenience init(path: String, store: consuming sending VersionStore) {
        self.init(path: path)
        install(store)
    }

    /// Whether it is open (false before `install`, after `close`, and when it could not be opened).
    var isOpen: Bool {
        state.withLock { state in
            if case .open = state { return true }
            return false
        }
    }

    /// Takes the opened store; from now on `withStore` uses it.
    func install(_ store: consuming sending VersionStore) {
        let box = StoreBox(store)
        state.withLock { $0 = .open(box) }
    }

    /// Records that it could not be opened: every use throws, naming why.
    func markUnavailable(_ reason: String) {
        state.withLock { $0 = .unavailable(reason: reason) }
    }

    /// Runs `body` with the store; `HistoryError.corrupt` when it is not open.
    func withStore<Result: Sendable>(_ body: (VersionStore) throws(HistoryError) -> Result) throws(HistoryError) -> Result {
        try state.withLock { (state: inout State) throws(HistoryError) -> Result in
            switch state {
            case .open(let box): return try body(box.store)
            case .unopened: throw HistoryError.corrupt(path: path, detail: "the database is not open yet")
            case .unavailable(let reason): throw HistoryError.corrupt(path: path, detail: reason)
            }
        }
    }

    func sync() throws(HistoryError) {
        try withStore { store throws(HistoryError) in try store.sync() }
    }

    /// The database's size on disk (main file and WAL); 0 once closed.
    var bytesOnDisk: Int64 {
        (try? withStore { store throws(HistoryError) in store.bytesOnDisk }) ?? 0
    }

    func close() {
        state.withLock { state in
            if case .open(let box) = state { box.store.close() }
            state = .unavailable(reason: "the database was closed as the agent stopped")
        }
    }

    /// Writes one recording; reads the file for an outside change (`files`).
    ///
    /// - Returns: the versions it recorded (none for a repeat; one per file for a folder's).
    func write(_ recording: VersionHistory.Recording, files: HistoryFiles) throws(HistoryError) -> [Version] {
        try withStore { store throws(HistoryError) in try Self.write(recording, to: store, files: files) }
    }

    private static func write(_ recording: VersionHistory.Recording, to store: VersionStore, files: HistoryFiles) throws(HistoryError) -> [Version] {
        switch recording {
        case .saved(let path, _, _, _), .changed(let path, _, _, _), .removed(let path, _, _):
            try store.clearStamp(of: path)
        case .moved(let from, let to, _):
            try store.clearStamp(of: from)
            try store.clearStamp(of: to)
        case .read, .conflictCopy, .folderRemoved, .folderMoved, .barrier:
            // A folder's files keep stamps of paths that no longer hold them: a file found there
            // again has another inode or ctime, and is read again.
            break
        }
        switch recording {
        case .saved(let path, let bytes, let who, let time):
            guard let bytes else { return [] }
            // A save of nothing but `restore`'s edit is the restore itself.
            let kind: VersionKind = who == "restore" ? .restored : .saved
            return try [store.record(VersionInput(path: path, content: bytes, kind: kind, who: who, time: time))].compactMap { $0 }
        case .read(let path, let bytes, let time):
            // Already there, most often: the store records nothing for the same bytes again.
            return try [store.record(VersionInput(path: path, content: bytes, kind: .baseline, who: "external", time: time))].compactMap { $0 }
        case .changed(let path, let kind, let time, let writer):
            guard let bytes = files.read(path) else { return [] }
            let input = VersionInput(
                path: path, content: bytes, kind: kind, who: "external", time: time, program: writer?.program, pid: writer?.pid)
            return try [store.record(input)].compactMap { $0 }
        case .conflictCopy(let path, let bytes, let copy, let who, let parent, let time):
            let input = VersionInput(
                path: path, content: bytes, kind: .conflictCopy, who: who, time: time, from: copy, parentContent: parent)
            return try [store.record(input)].compactMap { $0 }
        case .removed(let path, let who, let time):
            guard let latest = try store.latest(of: path), latest.kind != .removed else { return [] }
            return try [store.record(VersionInput(path: path, content: nil, kind: .removed, who: who, time: time))].compactMap { $0 }
        case .moved(let from, let to, let time):
            return try [move(from, to: to, in: store, files: files, time: time)].compactMap { $0 }
        case .folderRemoved(let folder, let time):
            var recorded: [Version] = []
            for latest in try latestVersions(below: folder, in: store) where latest.kind != .removed {
                let input = VersionInput(path: latest.path, content: nil, kind: .removed, who: "external", time: time)
                if let version = try store.record(input) { recorded.append(version) }
            }
            return recorded
        case .folderMoved(let from, let to, let time):
            var recorded: [Version] = []
            for latest in try latestVersions(below: from, in: store) where latest.kind != .removed {
                guard let below = latest.path.pathBelow(from) else { continue }
                if let version = try move(latest.path, to: to + "/" + below, in: store, files: files, time: time) { recorded.append(version) }
            }
            return recorded
        case .barrier:
            return []
        }
    }

    /// Records the file now at `to` as moved from `from`: what is there now, else what `from` last held.
    private static func move(
        _ from: String, to: String, in store: VersionStore, files: HistoryFiles, time: Int64
    ) throws(HistoryError) -> Version? {
        var content = files.read(to)
        if content == nil, let latest = try store.latest(of: from), latest.kind != .removed {
            content = try store.content(of: latest.id)
        }
        guard let content else { return nil }
        return try store.record(VersionInput(path: to, content: content, kind: .moved, who: "external", time: time, from: from))
    }

    /// The latest version of each path at or below `folder` (a conflict copy never: it was not the file).
    static func latestVersions(below folder: String, in store: VersionStore) throws(HistoryError) -> [Version] {
        var seen = PathSet()
        return try store.versions(below: folder).filter { $0.kind != .conflictCopy && seen.insert($0.path) }
    }
}

/// The open store, sent in once and then used only under `HistoryDatabase`'s lock: that lock, not
/// the type, is what makes sharing it safe.
private final class StoreBox: @unchecked Sendable {
    let store: VersionStore

    init(_ store: consuming sending VersionStore) {
        self.store = store
    }
}
