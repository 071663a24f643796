import ByteNames
import AutosaveHistory
import Synchronization

/// The history database, shared by the recorder and the queries: one `VersionStore` behind a
/// lock, used only from `BlockingIO` threads (SQLite and zstd block).
final class HistoryDatabase: Sendable {
    /// Where the database is, for messages.
    let path: String
    private let store: Mutex<VersionStore?>

    init(path: String, store: consuming sending VersionStore) {
        self.path = path
        self.store = Mutex(store)
    }

    /// Runs `body` with the store; `HistoryError.closed` once it is closed.
    func withStore<Result: Sendable>(_ body: (VersionStore) throws(HistoryError) -> Result) throws(HistoryError) -> Result {
        try store.withLock { (store: inout VersionStore?) throws(HistoryError) -> Result in
            guard let store else { throw HistoryError.corrupt(path: path, detail: "the database was closed as the agent stopped") }
            return try body(store)
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
        store.withLock { store in
            store?.close()
            store = nil
        }
    }

    /// Writes one recording; reads the file for an outside change (`files`).
    func write(_ recording: VersionHistory.Recording, files: HistoryFiles) throws(HistoryError) {
        try withStore { store throws(HistoryError) in try Self.write(recording, to: store, files: files) }
    }

    private static func write(_ recording: VersionHistory.Recording, to store: VersionStore, files: HistoryFiles) throws(HistoryError) {
        switch recording {
        case .saved(let path, let bytes, let who, let time):
            guard let bytes else { return }
            // A save of nothing but `restore`'s edit is the restore itself.
            try store.record(VersionInput(path: path, content: bytes, kind: who == "restore" ? .restored : .saved, who: who, time: time))
        case .read(let path, let bytes, let time):
            // Already there, most often: the store records nothing for the same bytes again.
            try store.record(VersionInput(path: path, content: bytes, kind: .baseline, who: "external", time: time))
        case .changed(let path, let kind, let time):
            guard let bytes = files.read(path) else { return }
            try store.record(VersionInput(path: path, content: bytes, kind: kind, who: "external", time: time))
        case .removed(let path, let who, let time):
            guard let latest = try store.latest(of: path), latest.kind != .removed else { return }
            try store.record(VersionInput(path: path, content: nil, kind: .removed, who: who, time: time))
        case .moved(let from, let to, let time):
            try move(from, to: to, in: store, files: files, time: time)
        case .folderRemoved(let folder, let time):
            for latest in try latestVersions(below: folder, in: store) where latest.kind != .removed {
                try store.record(VersionInput(path: latest.path, content: nil, kind: .removed, who: "external", time: time))
            }
        case .folderMoved(let from, let to, let time):
            for latest in try latestVersions(below: from, in: store) where latest.kind != .removed {
                guard let below = latest.path.pathBelow(from) else { continue }
                try move(latest.path, to: to + "/" + below, in: store, files: files, time: time)
            }
        case .barrier:
            return
        }
    }

    /// Records the file now at `to` as moved from `from`: what is there now, else what `from` last held.
    private static func move(_ from: String, to: String, in store: VersionStore, files: HistoryFiles, time: Int64) throws(HistoryError) {
        var content = files.read(to)
        if content == nil, let latest = try store.latest(of: from), latest.kind != .removed {
            content = try store.content(of: latest.id)
        }
        guard let content else { return }
        try store.record(VersionInput(path: to, content: content, kind: .moved, who: "external", time: time, from: from))
    }

    /// The latest version of each path at or below `folder`.
    static func latestVersions(below folder: String, in store: VersionStore) throws(HistoryError) -> [Version] {
        var seen = PathSet()
        return try store.versions(below: folder).filter { seen.insert($0.path) }
    }
}
