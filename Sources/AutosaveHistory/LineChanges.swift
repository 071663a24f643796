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
    /// The longest edit script (after the prefix, the suffix, and the lines found on one side only)
    /// searched for exactly: Myers' search costs about (lines × this) steps, and recording must
    /// not stall on a pathological pair. Past it the counts are an upper bound (see `between`).
    static let defaultEditLimit = 4096

    /// The lines `new` added and removed against `old`; nil when either is binary.
    ///
    /// Exact (a shortest line diff) unless the lines that differ need an edit script longer than
    /// `editLimit` after the lines found on one side only are set aside: then every line between
    /// the common prefix and suffix counts as removed and added, an honest upper bound (the
    /// counts of a diff that replaces that middle wholesale) rather than a long search.
    static func between(_ old: [UInt8], _ new: [UInt8], editLimit: Int = defaultEditLimit) -> LineChanges? {
        if isBinary(old) || isBinary(new) { return nil }
        if old == new { return LineChanges(added: 0, removed: 0) }
        return old.withUnsafeBufferPointer { a in
            new.withUnsafeBufferPointer { b in count(a, b, editLimit: editLimit) }
        }
    }

    /// Whether `bytes` holds a NUL among its first `binaryProbeBytes`.
    static func isBinary(_ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBytes { raw in
            guard let base = raw.baseAddress else { return false }
            return memchr(base, 0, min(raw.count, binaryProbeBytes)) != nil
        }
    }

    // MARK: - Counting

    private static func count(
        _ a: UnsafeBufferPointer<UInt8>, _ b: UnsafeBufferPointer<UInt8>, editLimit: Int
    ) -> LineChanges {
        let middle = Self.middle(a, b)
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
                oldKept.count, newKept.count, limit: editLimit,
                equal: { old.line(oldKept[$0], equals: new, newKept[$1]) })
        else {
            return LineChanges(added: new.count, removed: old.count)
        }
        // Of a shortest script's `distance` edits, removals minus additions is the kept lines' count difference.
        let difference = newKept.count - oldKept.count
        return LineChanges(added: addedAlone + (distance + difference) / 2, removed: removedAlone + (distance - difference) / 2)
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

    /// The length of a shortest edit script (removals plus additions) turning a sequence of
    /// `n` elements into one of `m`, by Myers' greedy forward search; nil past `limit` edits.
    private static func shortestEdit(_ n: Int, _ m: Int, limit: Int, equal: (Int, Int) -> Bool) -> Int? {
        if n == 0 || m == 0 { return n + m }
        let most = min(n + m, max(0, limit))
        // Furthest x reached on each diagonal k = x - y, at index k + offset.
        let offset = most + 1
        var furthest = [Int](repeating: 0, count: 2 * most + 3)
        return furthest.withUnsafeMutableBufferPointer { v -> Int? in
            for d in 0...most {
                var k = -d
                while k <= d {
                    var x = k == -d || (k != d && v[offset + k - 1] < v[offset + k + 1]) ? v[offset + k + 1] : v[offset + k - 1] + 1
                    var y = x - k
                    while x < n && y < m && equal(x, y) {
                        x += 1
                        y += 1
                    }
                    v[offset + k] = x
                    if x >= n && y >= m { return d }
                    k += 2
                }
            }
            return nil
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
        let basis: UInt64 = 0xcbf2_9ce4_8422_2325
        let prime: UInt64 = 0x0000_0100_0000_01b3
        bounds = [range.lowerBound]
        hashes = []
        var hash = basis
        var index = range.lowerBound
        while index < range.upperBound {
            let byte = buffer[index]
            hash = (hash ^ UInt64(byte)) &* prime
            index += 1
            if byte == 0x0A {
                bounds.append(index)
                hashes.append(hash)
                hash = basis
            }
        }
        if bounds[bounds.count - 1] < range.upperBound {
            bounds.append(range.upperBound)
            hashes.append(hash)
        }
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
