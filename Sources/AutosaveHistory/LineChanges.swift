import Glibc

/// How many lines a version added and removed against the version before it: what
/// `autosave history` shows as `+3 -1`, counted once, when the version is recorded.
///
/// The counts are those of a shortest line diff (as `git diff --stat` and `diff` count them): a
/// changed line is one removed and one added; a last line that gains or loses its line break is
/// changed. Counting is cheap for the common case, a small edit to a large file: the common
/// prefix and suffix are skipped byte by byte and only the lines between them are diffed.
struct LineChanges: Sendable, Equatable {
    var added: Int
    var removed: Int

    /// A content with a NUL among its first this many bytes is binary, as git and GNU diff judge
    /// (they look at the first 8000 bytes and the first buffer): it has no lines to count.
    static let binaryProbeBytes = 8000
    /// The steps (diagonals tried and lines compared) Myers' search may take before it gives up:
    /// recording must not stall on a pathological pair. About 10 ms on this project's machines,
    /// enough for hundreds of changes scattered through a file of 16,000 lines; past it the counts
    /// are an upper bound (see `between`).
    static let defaultStepLimit = 2_000_000

    /// The lines `new` added and removed against `old`; nil when either is binary.
    ///
    /// Exact (a shortest line diff) unless finding one, once the common prefix and suffix and the
    /// lines found on one side only are set aside, takes more than `stepLimit` steps: then every
    /// line between the common prefix and suffix counts as removed and added, an honest upper bound
    /// (the counts of a diff that replaces that middle wholesale) rather than a long search.
    static func between(_ old: [UInt8], _ new: [UInt8], stepLimit: Int = defaultStepLimit) -> LineChanges? {
        if isBinary(old) || isBinary(new) { return nil }
        return old.withUnsafeBufferPointer { a in
            new.withUnsafeBufferPointer { b in count(a, b, stepLimit: stepLimit) }
        }
    }

    /// Whether `bytes` holds a NUL among its first `binaryProbeBytes`: binary, as git and diff judge.
    static func isBinary(_ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBytes { raw in
            guard let base = raw.baseAddress else { return false }
            return memchr(base, 0, min(raw.count, binaryProbeBytes)) != nil
        }
    }

    // MARK: - Counting

    private static func count(
        _ a: UnsafeBufferPointer<UInt8>, _ b: UnsafeBufferPointer<UInt8>, stepLimit: Int
    ) -> LineChanges {
        let middle = Self.middle(a, b)
        if middle.old.isEmpty && middle.new.isEmpty { return LineChanges(added: 0, removed: 0) }
        let old = Lines(a, middle.old)
        let new = Lines(b, middle.new)
        // A line that occurs nowhere on the other side is in no common subsequence: it is changed,
        // whatever the search would find, and leaving it out keeps the search short when a block
        // was rewritten. (Hashes only decide absence; equal hashes are compared byte for byte.)
        let newHashes = Set(new.hashes)
        let oldHashes = Set(old.hashes)
        let oldKept = old.hashes.indices.filter { newHashes.contains(old.hashes[$0]) }
        let newKept = new.hashes.indices.filter { oldHashes.contains(new.hashes[$0]) }
        let removedAlone = old.count - oldKept.count
        let addedAlone = new.count - newKept.count
        guard
            let distance = shortestEdit(
                oldKept.map { old.hashes[$0] }, newKept.map { new.hashes[$0] }, stepLimit: stepLimit,
                equal: { old.line(oldKept[$0], equals: new, newKept[$1]) })
        else {
            return LineChanges(added: new.count, removed: old.count)
        }
        // Of a shortest script's `distance` edits, removals minus additions is the kept lines' count difference.
        let difference = newKept.count - oldKept.count
        return LineChanges(
            added: addedAlone + (distance + difference) / 2, removed: removedAlone + (distance - difference) / 2)
    }

    /// The byte ranges of `a` and `b` between their longest common prefix and suffix of whole lines.
    private static func middle(
        _ a: UnsafeBufferPointer<UInt8>, _ b: UnsafeBufferPointer<UInt8>
    ) -> (old: Range<Int>, new: Range<Int>) {
        let shorter = min(a.count, b.count)
        var same = 0
        if let left = a.baseAddress, let right = b.baseAddress {
            // Eight bytes at a time while they agree: a 1 MB file one line different is a memory scan.
            while same + 8 <= shorter,
                UnsafeRawPointer(left + same).loadUnaligned(as: UInt64.self)
                    == UnsafeRawPointer(right + same).loadUnaligned(as: UInt64.self)
            {
                same += 8
            }
        }
        while same < shorter && a[same] == b[same] { same += 1 }
        // Back to the start of the line the difference is in: the prefix is whole lines.
        var start = same
        while start > 0 && a[start - 1] != 0x0A { start -= 1 }
        var tail = 0
        let room = shorter - start
        if let left = a.baseAddress, let right = b.baseAddress {
            while tail + 8 <= room,
                UnsafeRawPointer(left + a.count - tail - 8).loadUnaligned(as: UInt64.self)
                    == UnsafeRawPointer(right + b.count - tail - 8).loadUnaligned(as: UInt64.self)
            {
                tail += 8
            }
        }
        while tail < room && a[a.count - 1 - tail] == b[b.count - 1 - tail] { tail += 1 }
        // Forward to a line start in both: past the first line break inside the common suffix,
        // unless the suffix already begins a line on both sides.
        func beginsLine(_ buffer: UnsafeBufferPointer<UInt8>, _ position: Int) -> Bool {
            position == start || buffer[position - 1] == 0x0A
        }
        if !(beginsLine(a, a.count - tail) && beginsLine(b, b.count - tail)) {
            var cut = a.count - tail
            while cut < a.count && a[cut] != 0x0A { cut += 1 }
            tail = cut < a.count ? a.count - cut - 1 : 0
        }
        return (start..<(a.count - tail), start..<(b.count - tail))
    }

    /// The length of a shortest edit script (removals plus additions) turning one sequence of lines into another, by Myers' greedy forward search; nil past `stepLimit` steps.
    /// Lines are told apart by their hashes, and those with equal hashes by `equal`.
    private static func shortestEdit(
        _ old: [UInt64], _ new: [UInt64], stepLimit: Int, equal: (Int, Int) -> Bool
    ) -> Int? {
        let n = old.count
        let m = new.count
        if n == 0 || m == 0 { return n + m }
        // Trying d edits takes at least d + 1 steps: no search past the budget needs more diagonals.
        var most = 0
        var steps = 0
        while most < n + m && steps <= stepLimit {
            most += 1
            steps += most + 1
        }
        steps = 0
        // Furthest x reached on each diagonal k = x - y, at index k + offset.
        let offset = most + 1
        var furthest = [Int](repeating: 0, count: 2 * most + 3)
        return furthest.withUnsafeMutableBufferPointer { v -> Int? in
            old.withUnsafeBufferPointer { old in
                new.withUnsafeBufferPointer { new in
                    for d in 0...most {
                        var k = -d
                        while k <= d {
                            var x =
                                k == -d || (k != d && v[offset + k - 1] < v[offset + k + 1])
                                ? v[offset + k + 1] : v[offset + k - 1] + 1
                            var y = x - k
                            let start = x
                            while x < n && y < m && old[x] == new[y] && equal(x, y) {
                                x += 1
                                y += 1
                            }
                            v[offset + k] = x
                            if x >= n && y >= m { return d }
                            steps += 1 + x - start
                            if steps > stepLimit { return nil }
                            k += 2
                        }
                    }
                    return nil
                }
            }
        }
    }
}

/// The lines of one range of a content: where each begins and ends, and a hash of each.
private struct Lines {
    let buffer: UnsafeBufferPointer<UInt8>
    /// Line `i` is `buffer[bounds[i]..<bounds[i + 1]]`, its line break included.
    var bounds: [Int]
    var hashes: [UInt64]

    var count: Int { hashes.count }

    init(_ buffer: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) {
        self.buffer = buffer
        bounds = [range.lowerBound]
        hashes = []
        guard let base = buffer.baseAddress, !range.isEmpty else { return }
        var start = range.lowerBound
        while start < range.upperBound {
            // memchr finds the line break; the line is hashed a word at a time.
            let found = memchr(base + start, 0x0A, range.upperBound - start)
            let end = found.map { UnsafeRawPointer($0) - UnsafeRawPointer(base) + 1 } ?? range.upperBound
            hashes.append(Self.hash(UnsafeRawPointer(base + start), count: end - start))
            bounds.append(end)
            start = end
        }
    }

    /// A 64-bit hash of `count` bytes, eight at a time: it only tells lines apart quickly, equal
    /// hashes are compared byte for byte.
    private static func hash(_ bytes: UnsafeRawPointer, count: Int) -> UInt64 {
        let multiplier: UInt64 = 0x9E37_79B9_7F4A_7C15
        var hash = UInt64(count) &* multiplier
        var offset = 0
        while offset + 8 <= count {
            hash = (hash ^ bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self)) &* multiplier
            hash ^= hash >> 29
            offset += 8
        }
        var last: UInt64 = 0
        while offset < count {
            last = last << 8 | UInt64(bytes.load(fromByteOffset: offset, as: UInt8.self))
            offset += 1
        }
        hash = (hash ^ last) &* multiplier
        return hash ^ (hash >> 32)
    }

    /// Whether line `index` holds the same bytes as `other`'s line `otherIndex`.
    func line(_ index: Int, equals other: Lines, _ otherIndex: Int) -> Bool {
        guard hashes[index] == other.hashes[otherIndex] else { return false }
        let length = bounds[index + 1] - bounds[index]
        guard length == other.bounds[otherIndex + 1] - other.bounds[otherIndex] else { return false }
        guard let left = buffer.baseAddress, let right = other.buffer.baseAddress else { return length == 0 }
        return memcmp(left + bounds[index], right + other.bounds[otherIndex], length) == 0
    }
}
