import ByteNames

/// Per path, the versions its buffer's saves were about to write since the path's records were
/// last obsolete: after a crash, the file may hold any of them, and each is the buffer's own.
///
/// An edit taken while a save is written is journaled on the version the buffer had before the
/// save (the buffer takes what it saved as its base only once the save is done). Recovery that
/// knew only that version took the file, holding the buffer's own save, for a change made while
/// the agent was down, and kept a conflict copy nobody needed. A save's `.saving` record, written
/// before the save changes the file, names what it writes, so recovery compares the file with it.
public struct SavesBegun {
    /// One save begun: the `ContentDigest` of what it writes, and the buffer revision that is.
    public struct Save: Sendable, Hashable {
        public var digest: UInt64
        public var revision: Int
    }

    /// How many a path keeps: saves of one buffer come one after another, so the file holds the
    /// latest or the one before it; a few more cover saves that failed meanwhile.
    static var limit: Int { 4 }

    private var saves: PathMap<[Save]> = [:]

    init() {}

    /// Those that `records` (recovered ones) carry.
    init(_ records: [JournalRecord]) {
        for record in records { saves[record.path] = record.savesBegun.isEmpty ? nil : record.savesBegun }
    }

    /// A save of `path` is about to write `revision`, whose `ContentDigest` is `digest`.
    mutating func append(_ digest: UInt64, revision: Int, for path: String) {
        var list = saves[path, default: []]
        list.append(Save(digest: digest, revision: revision))
        saves[path] = Array(list.suffix(Self.limit))
    }

    /// `path`'s records are obsolete (saved): what its saves wrote no longer matters.
    mutating func forget(_ path: String) { saves[path] = nil }

    /// The saves of `path` begun, oldest first.
    func saves(of path: String) -> [Save] { saves[path] ?? [] }

    /// As `.saving` records, for the paths in `paths` (those with unsaved records): what a
    /// rewritten journal keeps of them, revisions included.
    func records(of paths: [String]) -> [JournalRecord] {
        paths.flatMap { path in
            saves(of: path).map { JournalRecord(kind: .saving, path: path, revision: $0.revision, baseDigest: $0.digest) }
        }
    }
}
