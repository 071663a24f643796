import ByteNames

/// A settled external change: one burst of kernel events on one name, classified.
public struct FileChange: Sendable, Hashable, CustomStringConvertible {
    /// What happened to the path, as a user would say it.
    public enum Kind: String, Sendable {
        case modified, created, removed, moved
    }

    public var kind: Kind
    /// The path relative to the root (for `moved`, the new path).
    public var path: String
    /// For `moved`: the old path.
    public var from: String?
    /// The change concerns a whole directory (moved or removed with everything in it).
    public var isDirectory: Bool
    /// The name had a file only inside the settle window (created and gone again): there is
    /// nothing to report, but a buffer that looked at the file meanwhile must look again. Never
    /// logged, never sent to subscribers; always `removed`.
    public var isTransient: Bool
    /// For a name whose content came by renames the kernel paired through names that are not
    /// where the content started (a file made there, or made or moved over a known name, then
    /// renamed on, all in one burst): those names, in order, that have no file now. A buffer there that holds this very file
    /// (device and inode) follows it; the name's own file, if it had one, is gone.
    public var arrivedFrom: [String]
    /// The file at `path` when the change settled, as the watcher saw it to classify the change;
    /// nil when no file was there (removed, or created and gone again), and for a directory's
    /// change, which names no file. The buffers take it rather than looking at the name again;
    /// what must know the disk as it is now (a later change may be on its way) still looks.
    ///
    /// Not part of equality: two changes are equal when they say the same thing happened.
    public var fingerprint: Fingerprint?
    /// The process seen holding the file open for writing while the change settled (a logger, a
    /// slow writer): who wrote it, when the agent could tell. Not part of equality.
    public var writer: WritingProcess?

    public init(
        _ kind: Kind, _ path: String, from: String? = nil, isDirectory: Bool = false, isTransient: Bool = false,
        arrivedFrom: [String] = [], fingerprint: Fingerprint? = nil
    ) {
        self.kind = kind
        self.path = path
        self.from = from
        self.isDirectory = isDirectory
        self.isTransient = isTransient
        self.arrivedFrom = arrivedFrom
        self.fingerprint = fingerprint
    }

    /// Names compared as bytes, as Linux compares them.
    public static func == (lhs: FileChange, rhs: FileChange) -> Bool {
        (lhs.kind, lhs.isDirectory, lhs.isTransient) == (rhs.kind, rhs.isDirectory, rhs.isTransient)
            && lhs.path.isSameName(as: rhs.path) && lhs.from.map { PathKey($0) } == rhs.from.map { PathKey($0) }
            && lhs.arrivedFrom.elementsEqual(rhs.arrivedFrom) { $0.isSameName(as: $1) }
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(kind)
        hasher.combine(PathKey(path))
        hasher.combine(from.map { PathKey($0) })
        hasher.combine(isDirectory)
        hasher.combine(isTransient)
        hasher.combine(arrivedFrom.map { PathKey($0) })
    }

    public var description: String {
        let origin = from.map { "\($0) -> " } ?? ""
        return "\(isTransient ? "transient " : "")\(kind.rawValue) \(origin)\(path)\(isDirectory ? "/" : "")"
    }
}
