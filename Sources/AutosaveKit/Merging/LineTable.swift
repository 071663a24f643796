extension LineMerge {
    /// One input split into lines: line `k` is `bytes[bounds[k]..<bounds[k + 1]]` of the owning `LineTable`.
    struct SplitFile {
        /// Line boundaries as offsets into the table's combined bytes; one more entry than there are lines.
        var bounds: [Int]
        /// Each line's equivalence class: two lines have the same id exactly when their bytes are equal.
        var ids: [Int]

        var byteCount: Int { bounds[bounds.count - 1] - bounds[0] }
    }

    /// The three inputs in one byte buffer, split into lines, with every distinct line interned to a small integer.
    struct LineTable {
        let bytes: [UInt8]
        let base: SplitFile
        let ours: SplitFile
        let theirs: SplitFile
        /// The number of distinct lines over all three inputs; ids are in `0..<classCount`.
        let classCount: Int

        init(base: [UInt8], ours: [UInt8], theirs: [UInt8]) {
            var bytes: [UInt8] = []
            bytes.reserveCapacity(base.count + ours.count + theirs.count)
            bytes.append(contentsOf: base)
            bytes.append(contentsOf: ours)
            bytes.append(contentsOf: theirs)
            let ranges = [
                0..<base.count,
                base.count..<(base.count + ours.count),
                (base.count + ours.count)..<bytes.count,
            ]
            let (files, classCount) = bytes.withUnsafeBufferPointer { buffer in
                Self.intern(buffer, ranges: ranges)
            }
            self.bytes = bytes
            self.base = files[0]
            self.ours = files[1]
            self.theirs = files[2]
            self.classCount = classCount
        }

        /// Splits each range of `buffer` into lines and gives equal lines equal ids, in order of first appearance.
        private static func intern(_ buffer: UnsafeBufferPointer<UInt8>, ranges: [Range<Int>]) -> ([SplitFile], Int) {
            var splits: [Split] = []
            var lineCount = 0
            for range in ranges {
                let split = Self.split(buffer, range)
                lineCount += split.hashes.count
                splits.append(split)
            }

            // Open addressing with linear probing; at most half full, so every probe sequence ends at an empty slot.
            var capacity = 16
            while capacity < 2 * lineCount + 1 { capacity *= 2 }
            let mask = capacity - 1
            var slots = [Int](repeating: -1, count: capacity)
            var classHash: [UInt64] = []
            var classStart: [Int] = []
            var classEnd: [Int] = []

            var files: [SplitFile] = []
            for split in splits {
                var ids: [Int] = []
                ids.reserveCapacity(split.hashes.count)
                let hashes = split.hashes
                let bounds = split.bounds
                var line = 0
                while line < hashes.count {
                    let hash = hashes[line]
                    let start = bounds[line]
                    let end = bounds[line + 1]
                    line += 1
                    var slot = Int(truncatingIfNeeded: hash ^ (hash >> 29)) & mask
                    while true {
                        let candidate = slots[slot]
                        if candidate < 0 {
                            slots[slot] = classHash.count
                            ids.append(classHash.count)
                            classHash.append(hash)
                            classStart.append(start)
                            classEnd.append(end)
                            break
                        }
                        if classHash[candidate] == hash
                            && Self.equal(buffer, classStart[candidate], classEnd[candidate], start, end)
                        {
                            ids.append(candidate)
                            break
                        }
                        slot = (slot + 1) & mask
                    }
                }
                files.append(SplitFile(bounds: split.bounds, ids: ids))
            }
            return (files, classHash.count)
        }

        /// One range split into lines: boundaries as in `SplitFile`, and a hash of each line.
        private struct Split {
            var bounds: [Int]
            var hashes: [UInt64]
        }

        /// The line boundaries of `range` (each line ends after a `"\n"`, or at the end) and each line's FNV-1a hash.
        private static func split(_ buffer: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> Split {
            let basis: UInt64 = 0xcbf2_9ce4_8422_2325
            let prime: UInt64 = 0x0000_0100_0000_01b3
            var bounds = [range.lowerBound]
            var hashes: [UInt64] = []
            var hash = basis
            var index = range.lowerBound
            let end = range.upperBound
            while index < end {
                let byte = buffer[index]
                hash = (hash ^ UInt64(byte)) &* prime
                index += 1
                if byte == 0x0A {
                    bounds.append(index)
                    hashes.append(hash)
                    hash = basis
                }
            }
            if bounds[bounds.count - 1] < end {
                bounds.append(end)
                hashes.append(hash)
            }
            return Split(bounds: bounds, hashes: hashes)
        }

        /// Whether `buffer[start1..<end1]` and `buffer[start2..<end2]` hold the same bytes.
        private static func equal(
            _ buffer: UnsafeBufferPointer<UInt8>, _ start1: Int, _ end1: Int, _ start2: Int, _ end2: Int
        ) -> Bool {
            guard end1 - start1 == end2 - start2 else { return false }
            if start1 == start2 { return true }
            let raw = UnsafeRawBufferPointer(buffer)
            var first = start1
            var second = start2
            // Eight bytes at a time, then the tail byte by byte.
            while end1 - first >= 8 {
                let word1 = raw.loadUnaligned(fromByteOffset: first, as: UInt64.self)
                let word2 = raw.loadUnaligned(fromByteOffset: second, as: UInt64.self)
                if word1 != word2 { return false }
                first += 8
                second += 8
            }
            while first < end1 {
                if buffer[first] != buffer[second] { return false }
                first += 1
                second += 1
            }
            return true
        }
    }
}
