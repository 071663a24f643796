/// A probe thread's scratch for the file names of one directory at a time, made into a
/// `FileNames` of exactly their size once the directory is read.
///
/// Why not insert into a `FileNames` as the listing goes: its buffer grew by doubling, a few
/// allocations per directory, and below its index size each insert walked every name before
/// it to keep the set a set. On a first scan of a million files that was a tenth of the agent's
/// user time. Here the bytes go into one buffer that the thread keeps from directory to
/// directory, duplicates are caught by a hash table that is never cleared (each slot carries the
/// directory's generation), and the one `FileNames` per directory is one exact allocation.
///
/// Guarantees: `names()` holds each name `insert` accepted once, in insertion order, exactly as
/// `FileNames.insert` would have kept them (the same empty and over-long names refused).
struct FileNameCollector {
    /// Entries as `FileNames` lays them out.
    private var bytes: [UInt8] = []
    /// `generation << 32 | (offset + 1)` of an entry in `bytes`, by hash; a slot of another
    /// generation is empty.
    /// Small at first, for a scan of one new directory; a long scan's threads grow theirs to
    /// their biggest directory once and keep it.
    private var slots = [UInt64](repeating: 0, count: 64)
    private var generation: UInt64 = 1
    /// Names collected since `begin()`.
    private(set) var count = 0

    init() {}

    /// Forgets the names of the directory before, keeping the memory for the next.
    mutating func begin() {
        bytes.removeAll(keepingCapacity: true)
        count = 0
        generation += 1
        if generation > UInt64(UInt32.max) {
            slots = [UInt64](repeating: 0, count: slots.count)
            generation = 1
        }
    }

    /// Adds the name spelled by `name`'s bytes, valid UTF-8; false when it was already collected,
    /// is empty or is over 65,535 bytes.
    mutating func insert(_ name: UnsafeBufferPointer<UInt8>) -> Bool {
        guard !name.isEmpty, name.count <= Int(UInt16.max) else { return false }
        let hash = FileNames.hash(name)
        var slot = hash & (slots.count - 1)
        while slots[slot] >> 32 == generation {
            if FileNames.entry(in: bytes, at: Int(slots[slot] & 0xFFFF_FFFF) - 1, equals: name) { return false }
            slot = (slot + 1) & (slots.count - 1)
        }
        slots[slot] = generation << 32 | UInt64(bytes.count + 1)
        FileNames.appendEntry(name, to: &bytes)
        count += 1
        if count * 2 > slots.count { growSlots() }
        return true
    }

    /// Adds `name`; false when it was already collected (or is refused, as above).
    mutating func insert(_ name: String) -> Bool {
        var name = name
        return name.withUTF8 { insert($0) }
    }

    /// The names collected since `begin()`, in a `FileNames` of their size.
    func names() -> FileNames {
        // A copy of exactly this size: handing over `bytes` itself would share the scratch's
        // whole capacity with the known files until the next directory.
        let exact = [UInt8](unsafeUninitializedCapacity: bytes.count) { copy, initialized in
            initialized = copy.initialize(fromContentsOf: bytes)
        }
        return FileNames(uniqueEntries: exact, count: count)
    }

    /// Twice the slots, holding this directory's names again; the old generations go with them.
    private mutating func growSlots() {
        slots = [UInt64](repeating: 0, count: slots.count * 2)
        var offset = 0
        while offset < bytes.count {
            let (start, length) = FileNames.entry(in: bytes, at: offset)
            let hash = bytes.withUnsafeBufferPointer { FileNames.hash(UnsafeBufferPointer(rebasing: $0[start..<start + length])) }
            var slot = hash & (slots.count - 1)
            while slots[slot] >> 32 == generation { slot = (slot + 1) & (slots.count - 1) }
            slots[slot] = generation << 32 | UInt64(offset + 1)
            offset = start + length
        }
    }
}
