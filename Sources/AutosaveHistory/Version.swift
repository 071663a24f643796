/// What made a version: the event the agent saw or the thing it did.
public enum VersionKind: String, Sendable, CaseIterable, Codable {
    /// The agent saved a buffer.
    case saved
    /// Someone else changed the file.
    case modified
    /// The file appeared.
    case created
    /// The file was removed: a tombstone, which keeps the last content so it can be brought back.
    case removed
    /// The file arrived at its path by a rename; `from` is where it was.
    case moved
    /// The agent stored a file it had never recorded, so that a later outside change has a version before it.
    case baseline
    /// A restore from history wrote it.
    case restored
    /// The agent wrote a conflict copy; `from` is where the copy is, `parent` the version of the
    /// file its bytes came from. A copy is a version of the file that is not on disk at its path:
    /// it is never the file's latest (`@-N`, tombstones, retention's "latest" all skip copies).
    case conflictCopy = "conflict-copy"
}

/// One version of one file as history shows it.
public struct Version: Sendable, Equatable, Codable {
    /// Grows with every version recorded, across all paths, and is never reused.
    public var id: Int64
    /// Relative to the root, as the agent names it.
    public var path: String
    /// Milliseconds since the Unix epoch.
    public var time: Int64
    /// Who wrote it: "cli", "nvim:123", "mcp:claude", "external", "restore", …
    public var who: String
    public var kind: VersionKind
    /// Bytes of its content; nil when it has none.
    public var size: Int?
    /// For `moved`: the path it came from; for `conflictCopy`: where the copy is.
    public var from: String?
    /// The writing program's name, when the agent saw it.
    public var program: String?
    /// The writing program's process id, when the agent saw it.
    public var pid: Int32?
    /// 64-bit digest of the content (`ContentHash`, the same as AutosaveKit's `ContentDigest`);
    /// nil without content.
    public var digest: UInt64?
    /// Lines added against the version before it (of the same file, following moves); nil when
    /// unknown: a first version, a removal, a binary, or a version recorded before history counted
    /// lines (schema version 1).
    public var added: Int?
    /// Lines removed against the version before it; nil when `added` is.
    public var removed: Int?
    /// For `conflictCopy`: the id of the file's version the copy's bytes came from (the version
    /// the losing edits were made on, or the outside change the copy keeps); nil when history has
    /// none (a file never stored, or a version pruned since).
    public var parent: Int64?

    public init(
        id: Int64, path: String, time: Int64, who: String, kind: VersionKind, size: Int?, from: String? = nil,
        program: String? = nil, pid: Int32? = nil, digest: UInt64?, added: Int? = nil, removed: Int? = nil,
        parent: Int64? = nil
    ) {
        self.id = id
        self.path = path
        self.time = time
        self.who = who
        self.kind = kind
        self.size = size
        self.from = from
        self.program = program
        self.pid = pid
        self.digest = digest
        self.added = added
        self.removed = removed
        self.parent = parent
    }
}

/// What to record: one version of one file, as `VersionStore.record` takes it.
public struct VersionInput: Sendable {
    /// Relative to the root, as the agent names it.
    public var path: String
    /// The file's bytes; nil when there are none to keep (a removal, a move, whose content the
    /// store takes from the path's, or the old path's, latest version).
    public var content: [UInt8]?
    public var kind: VersionKind
    /// Who wrote it: "cli", "nvim:123", "mcp:claude", "external", "restore", …
    public var who: String
    /// Milliseconds since the Unix epoch.
    public var time: Int64
    /// For `moved`: the path it came from; for `conflictCopy`: where the copy is.
    public var from: String? = nil
    /// The writing program's name, when the agent saw it.
    public var program: String? = nil
    /// The writing program's process id, when the agent saw it.
    public var pid: Int32? = nil
    /// For `conflictCopy`: the bytes the copy came from; the path's latest version holding them
    /// (a copy excepted) becomes the version's `parent`.
    public var parentContent: [UInt8]? = nil

    public init(
        path: String, content: [UInt8]?, kind: VersionKind, who: String, time: Int64, from: String? = nil,
        program: String? = nil, pid: Int32? = nil, parentContent: [UInt8]? = nil
    ) {
        self.path = path
        self.content = content
        self.kind = kind
        self.who = who
        self.time = time
        self.from = from
        self.program = program
        self.pid = pid
        self.parentContent = parentContent
    }
}

/// What a content is, as history judges it.
public enum ContentKind {
    /// Whether `bytes` is binary: a NUL among its first 8000 bytes, as git and diff judge (such a
    /// version has no line counts, and its own size cap, `history.maxBinaryBytes`).
    public static func isBinary(_ bytes: [UInt8]) -> Bool { LineChanges.isBinary(bytes) }
}
