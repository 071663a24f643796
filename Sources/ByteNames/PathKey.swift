/// A path or a file name as the kernel compares it: byte for byte.
///
/// Swift's `String ==`, `hasPrefix` and hashing compare canonical equivalence, so `café.txt`
/// spelled with a precomposed `é` and the same name with `e` and a combining accent are one key
/// to a `[String: …]` — but two files on Linux. Every map, set and comparison of names in the
/// agent goes through this type (or `PathMap`, `PathSet`), never through `String ==`.
public struct PathKey: Hashable, Comparable, Sendable, CustomStringConvertible, ExpressibleByStringLiteral {
    /// The name as the agent spells it everywhere else (logs, the protocol).
    public let text: String

    /// The key of `text`'s bytes.
    public init(_ text: String) { self.text = text }

    /// The key of a literal's bytes.
    public init(stringLiteral text: String) { self.text = text }

    /// Whether the two are the same bytes.
    public static func == (lhs: PathKey, rhs: PathKey) -> Bool { lhs.text.isSameName(as: rhs.text) }

    /// Byte order: the order `ls` shows with `LC_ALL=C`, and the same on every run.
    public static func < (lhs: PathKey, rhs: PathKey) -> Bool { lhs.text.utf8.lexicographicallyPrecedes(rhs.text.utf8) }

    /// Hashes the bytes (not the canonical form `String` hashes).
    public func hash(into hasher: inout Hasher) {
        let hashed: Void? = text.utf8.withContiguousStorageIfAvailable { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
        if hashed == nil {
            for byte in text.utf8 { hasher.combine(byte) }
        }
        hasher.combine(text.utf8.count)
    }

    public var description: String { text }
}

extension StringProtocol {
    /// Whether the two spell the same name byte for byte (not merely canonically equivalent).
    public func isSameName(as other: some StringProtocol) -> Bool { utf8.elementsEqual(other.utf8) }

    /// Whether the name starts with `prefix` byte for byte.
    public func hasBytePrefix(_ prefix: some StringProtocol) -> Bool { utf8.starts(with: prefix.utf8) }

    /// Whether this path is `folder` itself or lies below it, comparing bytes and whole
    /// components (`a/bc` is not below `a/b`). An empty `folder` (the root) holds every path.
    public func isPath(inside folder: some StringProtocol) -> Bool {
        let folder = Array(folder.utf8)
        if folder.isEmpty { return true }
        guard utf8.starts(with: folder) else { return false }
        let rest = utf8.dropFirst(folder.count)
        return rest.isEmpty || rest.first == UInt8(ascii: "/") || folder.last == UInt8(ascii: "/")
    }

    /// The path below `folder` (no leading slash); nil when it does not lie strictly below it.
    public func pathBelow(_ folder: some StringProtocol) -> String? {
        guard isPath(inside: folder) else { return nil }
        var rest = utf8.dropFirst(folder.utf8.count)
        while rest.first == UInt8(ascii: "/") { rest = rest.dropFirst() }
        guard !rest.isEmpty else { return nil }
        return String(decoding: rest, as: UTF8.self)
    }

    /// The components of the path as the kernel splits it: at every `/` byte, empty ones left
    /// out. (`split(separator: "/")` splits grapheme clusters: a `/` followed by a combining
    /// mark is one cluster, and would not be split where the kernel splits.)
    public var pathComponents: [String] {
        utf8.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: true).map { String(decoding: $0, as: UTF8.self) }
    }

    /// The path split at its last `/` byte: `a/b/c` → (`a/b`, `c`), `c` → (``, `c`), `/c` → (`/`, `c`).
    public var folderAndName: (folder: String, name: String) {
        let bytes = String(self).utf8
        guard let slash = bytes.lastIndex(of: UInt8(ascii: "/")) else { return ("", String(decoding: bytes, as: UTF8.self)) }
        let folder = bytes[..<slash]
        return (
            folder.isEmpty ? "/" : String(decoding: folder, as: UTF8.self),
            String(decoding: bytes[bytes.index(after: slash)...], as: UTF8.self)
        )
    }

    /// Whether the path starts at `/` (its first byte), as the kernel reads it.
    public var isAbsolutePath: Bool { utf8.first == UInt8(ascii: "/") }
}
