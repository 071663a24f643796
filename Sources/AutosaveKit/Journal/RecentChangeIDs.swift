import ByteNames
import FoundationEssentials

/// The change ids of the latest edits the journal took, every path's, oldest first, at most
/// `limit` of them: what lets a client retry an edit it never heard the answer to (the same
/// `changeId` after a crash and a restart) without its being applied twice.
///
/// A buffer remembers the ids it applied only while it lives; the journal keeps these across
/// saves (a `saved` marker drops records, not ids), rewrites and restarts, as `.changeIDs`
/// records, and a buffer opened on a path takes that path's.
struct RecentChangeIDs: Sendable {
    /// As many as a buffer remembers: a retry comes right after the edit it repeats.
    static var limit: Int { 4096 }

    /// Oldest first; up to twice `limit` long, so that dropping the oldest is rare.
    private var entries: [(path: String, id: UUID)] = []

    init() {}

    /// The ids `records` hold (a replayed journal's, in order), each once, the latest `limit`.
    init(replaying records: [JournalRecord]) {
        var all: [(path: String, id: UUID)] = []
        for record in records {
            if record.kind == .changeIDs {
                all += record.ids.map { (record.path, $0) }
            } else if let id = record.changeID {
                all.append((record.path, id))
            }
        }
        // A rewritten journal holds a live record's id twice (in `.changeIDs` and in the record):
        // its latest place counts.
        var seen = Set<UUID>()
        var kept: [(path: String, id: UUID)] = []
        for entry in all.reversed() where kept.count < Self.limit && seen.insert(entry.id).inserted { kept.append(entry) }
        entries = kept.reversed()
    }

    /// Remembers `id`, applied to `path`'s buffer, dropping the oldest beyond `limit`.
    mutating func append(_ id: UUID, for path: String) {
        entries.append((path, id))
        if entries.count >= 2 * Self.limit { entries.removeFirst(entries.count - Self.limit) }
    }

    private var kept: ArraySlice<(path: String, id: UUID)> { entries.suffix(Self.limit) }

    /// The ids applied to `path`, oldest first.
    func ids(of path: String) -> [UUID] {
        kept.filter { $0.path.isSameName(as: path) }.map(\.id)
    }

    /// Every id as `.changeIDs` records, one per run of one path, in order: what a rewritten
    /// journal starts with.
    func records() -> [JournalRecord] {
        var records: [JournalRecord] = []
        var run: (path: String, ids: [UUID])?
        for entry in kept {
            if let current = run, current.path.isSameName(as: entry.path) {
                run?.ids.append(entry.id)
                continue
            }
            if let current = run { records.append(.changeIDs(current.ids, of: current.path)) }
            run = (entry.path, [entry.id])
        }
        if let current = run { records.append(.changeIDs(current.ids, of: current.path)) }
        return records
    }
}
