import Glibc

/// The names of one directory's files, held compactly: a million files cost a few bytes each
/// rather than a `String` and a hash-table slot apiece.
///
/// Every name lives in one byte buffer as a length byte and its UTF-8 bytes, in the order it was
/// inserted. Up to `linearLimit` names are found by walking the buffer; above that, an
/// open-addressing index of offsets into it finds them. A removed name's first byte is set to 0
/// (no file name holds a NUL byte), and the buffer is compacted once half of it is removed names.
///
/// Guarantees: a set of names (inserting one twice keeps one), iterated in insertion order. The
/// empty name is never a member, nor a name over 65,535 bytes. Names of 255 bytes or more (Linux
/// allows 255) are held behind a three-byte length.
public struct FileNames: Sendable, Sequence {
    /// `[length][bytes]` per name; a length of `longName` is followed by a two-byte length.
    private var bytes: [UInt8] = []
    /// The hash index and the counts, only for more than `linearLimit` names: most directories
    /// have fewer, and a map of a million files' directories holds one `FileNames` per directory
    /// inline in its buckets, so every byte of this struct counts 262,144 times there (16 bytes,
    /// not 40). Without it, the counts are found by walking the few names in `bytes`.
    private var index: Index?

    /// How many names are members.
    public var count: Int { index?.count ?? Self.tally(bytes).live }

    /// Offset + 1 of each name in `bytes`, by hash; 0 is empty, `tombstone` a removed name; how
    /// many slots are in use, live names and tombstones, for when to grow or rebuild; how many
    /// names are members, and how many bytes of removed names `bytes` still holds. A class, so
    /// that the struct holding it stays small; copied before a change when shared.
    private final class Index: @unchecked Sendable {
        var slots: [UInt32]
        var usedSlots = 0
        var count = 0
        var removedBytes = 0
        init(capacity: Int) { slots = [UInt32](repeating: 0, count: capacity) }
        init(copying other: Index) {
            slots = other.slots
            usedSlots = other.usedSlots
            count = other.count
            removedBytes = other.removedBytes
        }
    }

    /// The live names in `bytes`, and the bytes its removed names still take, by walking it.
    private static func tally(_ bytes: [UInt8]) -> (live: Int, removedBytes: Int) {
        var live = 0
        var removed = 0
        var offset = 0
        while offset < bytes.count {
            let (start, length) = entry(in: bytes, at: offset)
            if bytes[start] != 0 { live += 1 } else { removed += start - offset + length }
            offset = start + length
        }
        return (live, removed)
    }

    /// The index, made unique to this value before it is changed.
    private mutating func uniqueIndex() -> Index {
        if !isKnownUniquelyReferenced(&index!) { index = Index(copying: index!) }
        return index!
    }

    /// Below this many names, walking the buffer is as quick as an index and costs nothing.
    static var linearLimit: Int { 16 }
    private static var tombstone: UInt32 { .max }
    private static var longName: UInt8 { 255 }

    public init() {}

    /// A set of `names`, sized exactly for them.
    public init<S: Sequence>(_ names: S) where S.Element == String {
        if let array = names as? [String] {
            bytes.reserveCapacity(array.reduce(0) { $0 + Self.headerSize($1.utf8.count) + $1.utf8.count })
        }
        for name in names { insert(name) }
    }

    /// A set of the `count` names laid out in `entries` as this type lays them out, which the
    /// caller (`FileNameCollector`) made sure are distinct and not empty.
    init(uniqueEntries entries: [UInt8], count: Int) {
        bytes = entries
        if count > Self.linearLimit { rebuildIndex() }
    }

    /// Whether there is no name: the buffer is emptied with the last name removed, so this is
    /// whether it holds any entry.
    public var isEmpty: Bool { bytes.isEmpty }

    /// Whether `name` is a member.
    public func contains(_ name: String) -> Bool {
        var name = name
        return name.withUTF8 { find($0) } != nil
    }

    /// Adds `name`; returns false when it was already a member (or is empty).
    @discardableResult
    public mutating func insert(_ name: String) -> Bool {
        var name = name
        return name.withUTF8 { insert($0) }
    }

    /// Removes `name`; returns false when it was not a member.
    @discardableResult
    public mutating func remove(_ name: String) -> Bool {
        var name = name
        return name.withUTF8 { remove($0) }
    }

    public func makeIterator() -> Iterator { Iterator(bytes: bytes) }

    /// The names in insertion order, each made into a `String` as it is reached.
    public struct Iterator: IteratorProtocol {
        fileprivate let bytes: [UInt8]
        fileprivate var offset = 0

        public mutating func next() -> String? {
            while offset < bytes.count {
                let (start, length) = FileNames.entry(in: bytes, at: offset)
                offset = start + length
                if bytes[start] != 0 {
                    return String(decoding: bytes[start..<start + length], as: UTF8.self)
                }
            }
            return nil
        }
    }

    // MARK: - The byte buffer

    private static func headerSize(_ length: Int) -> Int { length < Int(longName) ? 1 : 3 }

    /// Where the name at `offset` starts, and how long it is.
    static func entry(in bytes: [UInt8], at offset: Int) -> (start: Int, length: Int) {
        let first = bytes[offset]
        guard first == longName else { return (offset + 1, Int(first)) }
        return (offset + 3, Int(bytes[offset + 1]) << 8 | Int(bytes[offset + 2]))
    }

    /// Whether the live entry at `offset` of `bytes` spells `name`.
    static func entry(in bytes: [UInt8], at offset: Int, equals name: UnsafeBufferPointer<UInt8>) -> Bool {
        let (start, length) = entry(in: bytes, at: offset)
        guard length == name.count, bytes[start] != 0 else { return false }
        return bytes.withUnsafeBufferPointer { stored in
            memcmp(stored.baseAddress! + start, name.baseAddress!, length) == 0
        }
    }

    /// Appends `name`'s entry, its length header and its bytes, to `bytes`.
    static func appendEntry(_ name: UnsafeBufferPointer<UInt8>, to bytes: inout [UInt8]) {
        if name.count < Int(longName) {
            bytes.append(UInt8(name.count))
        } else {
            bytes.append(contentsOf: [longName, UInt8(name.count >> 8), UInt8(name.count & 0xFF)])
        }
        bytes.append(contentsOf: name)
    }

    private func matches(_ name: UnsafeBufferPointer<UInt8>, at offset: Int) -> Bool {
        Self.entry(in: bytes, at: offset, equals: name)
    }

    /// The offset of `name`'s entry, when it is a member.
    private func find(_ name: UnsafeBufferPointer<UInt8>) -> Int? {
        guard !name.isEmpty, !bytes.isEmpty else { return nil }
        if index == nil {
            var offset = 0
            while offset < bytes.count {
                if matches(name, at: offset) { return offset }
                let (start, length) = Self.entry(in: bytes, at: offset)
                offset = start + length
            }
            return nil
        }
        return findSlot(name).map { Int(index!.slots[$0]) - 1 }
    }

    /// Adds the name spelled by `name`'s bytes, which must be valid UTF-8 (a scan passes ASCII
    /// names straight from the directory it read); returns false when it was already a member.
    mutating func insert(_ name: UnsafeBufferPointer<UInt8>) -> Bool {
        guard !name.isEmpty, name.count <= Int(UInt16.max), find(name) == nil else { return false }
        let offset = bytes.count
        Self.appendEntry(name, to: &bytes)
        if index != nil {
            let index = uniqueIndex()
            index.count += 1
            place(offset, hash: Self.hash(name), in: index)
            if index.usedSlots * 10 > index.slots.count * 7 { rebuildIndex() }
        } else if count > Self.linearLimit {
            rebuildIndex()
        }
        return true
    }

    private mutating func remove(_ name: UnsafeBufferPointer<UInt8>) -> Bool {
        guard !name.isEmpty, !bytes.isEmpty else { return false }
        let offset: Int
        var indexed: Index?
        if index == nil {
            guard let found = find(name) else { return false }
            offset = found
        } else {
            guard let slot = findSlot(name) else { return false }
            let index = uniqueIndex()
            offset = Int(index.slots[slot]) - 1
            index.slots[slot] = Self.tombstone
            indexed = index
        }
        let (start, length) = Self.entry(in: bytes, at: offset)
        bytes[start] = 0
        let live: Int
        let removed: Int
        if let indexed {
            indexed.count -= 1
            indexed.removedBytes += start - offset + length
            (live, removed) = (indexed.count, indexed.removedBytes)
        } else {
            (live, removed) = Self.tally(bytes)
        }
        if live == 0 {
            self = FileNames()
        } else if removed * 2 > bytes.count && bytes.count > 256 {
            compact()
        }
        return true
    }

    /// Drops removed names from the buffer, and rebuilds the index on the new offsets.
    private mutating func compact() {
        let live = count
        var kept: [UInt8] = []
        kept.reserveCapacity(bytes.count - (index?.removedBytes ?? Self.tally(bytes).removedBytes))
        var offset = 0
        while offset < bytes.count {
            let (start, length) = Self.entry(in: bytes, at: offset)
            if bytes[start] != 0 { kept.append(contentsOf: bytes[offset..<start + length]) }
            offset = start + length
        }
        bytes = kept
        if live > Self.linearLimit { rebuildIndex() } else { index = nil }
    }

    // MARK: - The index

    /// The slot holding `name`, when it is a member.
    private func findSlot(_ name: UnsafeBufferPointer<UInt8>) -> Int? {
        guard let slots = index?.slots else { return nil }
        let mask = slots.count - 1
        var slot = Self.hash(name) & mask
        while slots[slot] != 0 {
            if slots[slot] != Self.tombstone && matches(name, at: Int(slots[slot]) - 1) { return slot }
            slot = (slot + 1) & mask
        }
        return nil
    }

    /// Puts `offset` in `index`, which only this value holds.
    private func place(_ offset: Int, hash: Int, in index: Index) {
        let mask = index.slots.count - 1
        var slot = hash & mask
        while index.slots[slot] != 0 && index.slots[slot] != Self.tombstone { slot = (slot + 1) & mask }
        if index.slots[slot] == 0 { index.usedSlots += 1 }
        index.slots[slot] = UInt32(offset + 1)
    }

    /// A fresh index for the live names, at most half full after this (it is rebuilt past 70%,
    /// tombstones included).
    private mutating func rebuildIndex() {
        let (live, removed) = Self.tally(bytes)
        var capacity = 32
        while capacity < live * 2 { capacity *= 2 }
        let index = Index(capacity: capacity)
        index.count = live
        index.removedBytes = removed
        self.index = index
        var offset = 0
        while offset < bytes.count {
            let (start, length) = Self.entry(in: bytes, at: offset)
            if bytes[start] != 0 {
                let hash = bytes.withUnsafeBufferPointer { Self.hash(UnsafeBufferPointer(rebasing: $0[start..<start + length])) }
                place(offset, hash: hash, in: index)
            }
            offset = start + length
        }
    }

    /// FNV-1a: names are short, and a seeded hash buys nothing for a directory's own names.
    static func hash(_ name: UnsafeBufferPointer<UInt8>) -> Int {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in name {
            hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01B3
        }
        return Int(truncatingIfNeeded: hash ^ (hash >> 32))
    }
}

extension FileNames: Equatable {
    /// The same names, in whatever order.
    public static func == (lhs: FileNames, rhs: FileNames) -> Bool {
        lhs.count == rhs.count && lhs.allSatisfy { rhs.contains($0) }
    }
}

extension FileNames: ExpressibleByArrayLiteral {
    public init(arrayLiteral names: String...) { self.init(names) }
}
