/// The outcome of merging two edits of the same base.
///
/// Produced by `LineMerge.merge(base:ours:theirs:)`; a `.merged` value holds exact bytes, never conflict markers.
public enum MergeResult: Sendable, Equatable {
    /// Both sides' changes applied; the merged bytes.
    case merged([UInt8])
    /// Both sides changed the same lines (or adjacent/overlapping regions) differently.
    case conflict
}

/// A diff3-style three-way line merge of byte buffers, like `git merge-file` without conflict markers.
///
/// Lines are raw bytes, each keeping its terminating `"\n"` (a missing final newline is therefore a change of its own
/// and round-trips byte for byte; a `"\r"` is just another byte). The merge is pure, deterministic and total: it never
/// traps, whatever the input (empty, binary, huge lines), and it applies every change of either side exactly once.
public enum LineMerge {
    /// Three-way merge of `ours` and `theirs`, both edited from `base`, line by line.
    ///
    /// Identical sides, or a side equal to `base`, short-circuit to the other side. Otherwise each side is diffed
    /// against `base` (Myers' O(ND) algorithm on interned lines) and the resulting change hunks are combined:
    /// hunks of one side that no hunk of the other side overlaps or touches are applied as they are; hunks of both
    /// sides whose base ranges overlap or touch (no unchanged base line between them, including two insertions at the
    /// same place) merge only when both sides turned that base region into the same lines, and are a `.conflict`
    /// otherwise.
    ///
    /// - Returns: `.merged` with the bytes of both sides' changes applied to `base`, or `.conflict`.
    public static func merge(base: [UInt8], ours: [UInt8], theirs: [UInt8]) -> MergeResult {
        if ours == theirs { return .merged(ours) }
        if ours == base { return .merged(theirs) }
        if theirs == base { return .merged(ours) }

        let table = LineTable(base: base, ours: ours, theirs: theirs)
        let oursHunks = Differ.hunks(base: table.base.ids, side: table.ours.ids, classCount: table.classCount)
        let theirsHunks = Differ.hunks(base: table.base.ids, side: table.theirs.ids, classCount: table.classCount)
        return Combiner(table: table, ours: oursHunks, theirs: theirsHunks).combine()
    }
}

// MARK: - Lines

extension LineMerge {
    /// One input split into lines: line `k` is `bytes[bounds[k]..<bounds[k + 1]]` of the owning `LineTable`.
    fileprivate struct SplitFile {
        /// Line boundaries as offsets into the table's combined bytes; one more entry than there are lines.
        var bounds: [Int]
        /// Each line's equivalence class: two lines have the same id exactly when their bytes are equal.
        var ids: [Int]

        var byteCount: Int { bounds[bounds.count - 1] - bounds[0] }
    }

    /// The three inputs in one byte buffer, split into lines, with every distinct line interned to a small integer.
    fileprivate struct LineTable {
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

// MARK: - Diff

extension LineMerge {
    /// A change from base to one side: base lines `baseStart..<baseEnd` become side lines `sideStart..<sideEnd`.
    ///
    /// Hunks of one diff are sorted and separated by at least one unchanged line.
    struct Hunk: Equatable {
        var baseStart: Int
        var baseEnd: Int
        var sideStart: Int
        var sideEnd: Int
    }

    /// The line diff behind the merge, on interned line ids.
    enum Differ {
        /// The change hunks turning the line ids `base` into `side` (all ids in `0..<classCount`), from a shortest
        /// edit script, or a near-shortest one for inputs whose diff would cost more than `costLimit` (by default
        /// about the square root of the input size, at least 256) steps per split.
        static func hunks(base: [Int], side: [Int], classCount: Int, costLimit: Int? = nil) -> [Hunk] {
            // A line that does not occur in the other sequence at all cannot be part of any common subsequence:
            // mark it changed up front and diff only the rest. Wholly rewritten files thus cost next to nothing.
            // (Index loops throughout: they stay fast in unoptimized builds, where iterators do not.)
            let (xs, xMap) = Self.kept(base, occurringIn: side, classCount: classCount)
            let (ys, yMap) = Self.kept(side, occurringIn: base, classCount: classCount)
            let (xChanged, yChanged) = Myers.changes(xs, ys, costLimit: costLimit)
            var baseChanged = [Bool](repeating: true, count: base.count)
            var sideChanged = [Bool](repeating: true, count: side.count)
            var index = 0
            while index < xs.count {
                if !xChanged[index] { baseChanged[xMap[index]] = false }
                index += 1
            }
            index = 0
            while index < ys.count {
                if !yChanged[index] { sideChanged[yMap[index]] = false }
                index += 1
            }

            // Discarding loses where the discarded lines were, so a change within a run of equal lines can land
            // anywhere in the run; slide each change next to the other file's change, as git does.
            compact(base, &baseChanged, other: sideChanged)
            compact(side, &sideChanged, other: baseChanged)
            return Self.hunks(baseChanged: baseChanged, sideChanged: sideChanged)
        }

        /// The elements of `ids` that occur in `other`, and the index in `ids` of each.
        private static func kept(_ ids: [Int], occurringIn other: [Int], classCount: Int) -> ([Int], [Int]) {
            var occurs = [Bool](repeating: false, count: classCount)
            var index = 0
            while index < other.count {
                occurs[other[index]] = true
                index += 1
            }
            var kept: [Int] = []
            var positions: [Int] = []
            kept.reserveCapacity(ids.count)
            positions.reserveCapacity(ids.count)
            index = 0
            while index < ids.count {
                let id = ids[index]
                if occurs[id] {
                    kept.append(id)
                    positions.append(index)
                }
                index += 1
            }
            return (kept, positions)
        }

        /// A maximal run `start..<end` of changed lines; empty between two unchanged lines.
        private struct Group {
            var start: Int
            var end: Int
        }

        /// Shifts each run of changed lines of one file (`ids`, `changed`) along its run of equal lines, after git's
        /// `xdl_change_compact`: runs that meet merge; a run that can be lined up with a change in the other file is
        /// moved there; any other run moves as far down as it can. The edit script stays as short as before.
        private static func compact(_ ids: [Int], _ changed: inout [Bool], other: [Bool]) {
            var group = Self.firstGroup(changed)
            var otherGroup = Self.firstGroup(other)
            while true {
                if group.end != group.start {
                    var size: Int
                    var earliestEnd: Int
                    var endMatchingOther: Int?
                    repeat {
                        size = group.end - group.start
                        endMatchingOther = nil
                        while slideUp(ids, &changed, &group) {
                            guard previousGroup(other, &otherGroup) else { return }
                        }
                        earliestEnd = group.end
                        if otherGroup.end > otherGroup.start { endMatchingOther = group.end }
                        while slideDown(ids, &changed, &group) {
                            guard nextGroup(other, &otherGroup) else { return }
                            if otherGroup.end > otherGroup.start { endMatchingOther = group.end }
                        }
                    } while size != group.end - group.start
                    if group.end != earliestEnd && endMatchingOther != nil {
                        while otherGroup.end == otherGroup.start {
                            guard slideUp(ids, &changed, &group), previousGroup(other, &otherGroup) else { return }
                        }
                    }
                }
                guard nextGroup(changed, &group), nextGroup(other, &otherGroup) else { return }
            }
        }

        private static func firstGroup(_ changed: [Bool]) -> Group {
            var end = 0
            while end < changed.count && changed[end] { end += 1 }
            return Group(start: 0, end: end)
        }

        private static func nextGroup(_ changed: [Bool], _ group: inout Group) -> Bool {
            guard group.end < changed.count else { return false }
            group.start = group.end + 1
            group.end = group.start
            while group.end < changed.count && changed[group.end] { group.end += 1 }
            return true
        }

        private static func previousGroup(_ changed: [Bool], _ group: inout Group) -> Bool {
            guard group.start > 0 else { return false }
            group.end = group.start - 1
            group.start = group.end
            while group.start > 0 && changed[group.start - 1] { group.start -= 1 }
            return true
        }

        /// Moves a non-empty group one line down if the line after it equals its first line.
        private static func slideDown(_ ids: [Int], _ changed: inout [Bool], _ group: inout Group) -> Bool {
            guard group.start < group.end, group.end < ids.count, ids[group.start] == ids[group.end] else {
                return false
            }
            changed[group.start] = false
            changed[group.end] = true
            group.start += 1
            group.end += 1
            while group.end < changed.count && changed[group.end] { group.end += 1 }
            return true
        }

        /// Moves a non-empty group one line up if the line before it equals its last line.
        private static func slideUp(_ ids: [Int], _ changed: inout [Bool], _ group: inout Group) -> Bool {
            guard group.start < group.end, group.start > 0, ids[group.start - 1] == ids[group.end - 1] else {
                return false
            }
            group.start -= 1
            group.end -= 1
            changed[group.start] = true
            changed[group.end] = false
            while group.start > 0 && changed[group.start - 1] { group.start -= 1 }
            return true
        }

        /// Groups the changed-line flags into hunks; unchanged lines of both sequences pair up in order.
        private static func hunks(baseChanged: [Bool], sideChanged: [Bool]) -> [Hunk] {
            var hunks: [Hunk] = []
            let baseCount = baseChanged.count
            let sideCount = sideChanged.count
            var i = 0
            var j = 0
            while i < baseCount || j < sideCount {
                if i < baseCount && j < sideCount && !baseChanged[i] && !sideChanged[j] {
                    i += 1
                    j += 1
                    continue
                }
                let hunkBase = i
                let hunkSide = j
                while i < baseCount && baseChanged[i] { i += 1 }
                while j < sideCount && sideChanged[j] { j += 1 }
                if i == hunkBase && j == hunkSide {
                    // Unpaired unchanged lines cannot come out of a diff; should they ever, treat the rest as changed.
                    i = baseCount
                    j = sideCount
                }
                hunks.append(Hunk(baseStart: hunkBase, baseEnd: i, sideStart: hunkSide, sideEnd: j))
            }
            return hunks
        }
    }

    /// Myers' O(ND) difference algorithm in linear space (divide and conquer on the middle snake), after GNU diff's
    /// `diffseq`, including its cost cut-off: past a cost of `tooExpensive` a subproblem is split at the best point
    /// found so far, trading minimality for bounded time on pathological inputs.
    fileprivate struct Myers {
        private let xv: UnsafeMutablePointer<Int>
        private let yv: UnsafeMutablePointer<Int>
        private let xChanged: UnsafeMutablePointer<Bool>
        private let yChanged: UnsafeMutablePointer<Bool>
        /// Furthest-reaching x per diagonal `k = x - y`, at index `k + offset`, for the forward search.
        private let fd: UnsafeMutablePointer<Int>
        /// The same for the backward search.
        private let bd: UnsafeMutablePointer<Int>
        private let offset: Int
        private let xCount: Int
        private let yCount: Int
        private let tooExpensive: Int

        private struct Job {
            var xoff: Int
            var xlim: Int
            var yoff: Int
            var ylim: Int
            var minimal: Bool
        }

        private struct Partition {
            var xmid: Int
            var ymid: Int
            var loMinimal: Bool
            var hiMinimal: Bool
        }

        /// Which elements of `x` and of `y` are not part of the common subsequence found.
        static func changes(_ x: [Int], _ y: [Int], costLimit: Int?) -> (x: [Bool], y: [Bool]) {
            let n = x.count
            let m = y.count
            let diagonals = n + m + 3
            let xv = UnsafeMutablePointer<Int>.allocate(capacity: n + 1)
            let yv = UnsafeMutablePointer<Int>.allocate(capacity: m + 1)
            let xChanged = UnsafeMutablePointer<Bool>.allocate(capacity: n + 1)
            let yChanged = UnsafeMutablePointer<Bool>.allocate(capacity: m + 1)
            let fd = UnsafeMutablePointer<Int>.allocate(capacity: diagonals)
            let bd = UnsafeMutablePointer<Int>.allocate(capacity: diagonals)
            defer {
                xv.deallocate()
                yv.deallocate()
                xChanged.deallocate()
                yChanged.deallocate()
                fd.deallocate()
                bd.deallocate()
            }
            _ = UnsafeMutableBufferPointer(start: xv, count: n).initialize(from: x)
            _ = UnsafeMutableBufferPointer(start: yv, count: m).initialize(from: y)
            xChanged.initialize(repeating: false, count: n + 1)
            yChanged.initialize(repeating: false, count: m + 1)
            fd.initialize(repeating: -1, count: diagonals)
            bd.initialize(repeating: Int.max, count: diagonals)

            // As git's xdiff: about the square root of the problem size, but never below 256.
            var tooExpensive = 1
            var remaining = n + m + 3
            while remaining != 0 {
                remaining >>= 2
                tooExpensive <<= 1
            }
            let myers = Myers(
                xv: xv, yv: yv, xChanged: xChanged, yChanged: yChanged, fd: fd, bd: bd, offset: m + 1,
                xCount: n, yCount: m, tooExpensive: max(1, costLimit ?? max(256, tooExpensive)))
            myers.run()

            let xResult = Array(UnsafeBufferPointer(start: xChanged, count: n))
            let yResult = Array(UnsafeBufferPointer(start: yChanged, count: m))
            return (xResult, yResult)
        }

        private func run() {
            var jobs = [Job(xoff: 0, xlim: xCount, yoff: 0, ylim: yCount, minimal: false)]
            while let job = jobs.popLast() {
                var xoff = job.xoff
                var xlim = job.xlim
                var yoff = job.yoff
                var ylim = job.ylim
                // Slide along the common prefix and suffix.
                while xoff < xlim && yoff < ylim && xv[xoff] == yv[yoff] {
                    xoff += 1
                    yoff += 1
                }
                while xoff < xlim && yoff < ylim && xv[xlim - 1] == yv[ylim - 1] {
                    xlim -= 1
                    ylim -= 1
                }
                if xoff == xlim || yoff == ylim {
                    markChanged(xoff, xlim, yoff, ylim)
                    continue
                }
                let part = split(xoff, xlim, yoff, ylim, minimal: job.minimal)
                let isInside = xoff <= part.xmid && part.xmid <= xlim && yoff <= part.ymid && part.ymid <= ylim
                let isProper = (part.xmid, part.ymid) != (xoff, yoff) && (part.xmid, part.ymid) != (xlim, ylim)
                guard isInside && isProper else {
                    // Cannot happen; if it did, a coarser but still correct answer beats looping forever.
                    markChanged(xoff, xlim, yoff, ylim)
                    continue
                }
                jobs.append(Job(xoff: part.xmid, xlim: xlim, yoff: part.ymid, ylim: ylim, minimal: part.hiMinimal))
                jobs.append(Job(xoff: xoff, xlim: part.xmid, yoff: yoff, ylim: part.ymid, minimal: part.loMinimal))
            }
        }

        private func markChanged(_ xoff: Int, _ xlim: Int, _ yoff: Int, _ ylim: Int) {
            var index = xoff
            while index < xlim {
                xChanged[index] = true
                index += 1
            }
            index = yoff
            while index < ylim {
                yChanged[index] = true
                index += 1
            }
        }

        /// Finds the midpoint of a shortest edit script for `x[xoff..<xlim]` and `y[yoff..<ylim]` (both non-empty),
        /// or, past the cost cut-off and unless `minimal`, a good enough split point.
        private func split(_ xoff: Int, _ xlim: Int, _ yoff: Int, _ ylim: Int, minimal: Bool) -> Partition {
            let dmin = xoff - ylim
            let dmax = xlim - yoff
            let fmid = xoff - yoff
            let bmid = xlim - ylim
            var fmin = fmid
            var fmax = fmid
            var bmin = bmid
            var bmax = bmid
            let odd = (fmid - bmid) & 1 != 0
            let fd = self.fd + offset
            let bd = self.bd + offset

            fd[fmid] = xoff
            bd[bmid] = xlim
            var cost = 1
            while true {
                // Extend the forward search by one edit on each diagonal.
                if fmin > dmin {
                    fmin -= 1
                    fd[fmin - 1] = -1
                } else {
                    fmin += 1
                }
                if fmax < dmax {
                    fmax += 1
                    fd[fmax + 1] = -1
                } else {
                    fmax -= 1
                }
                var d = fmax
                while d >= fmin {
                    let tlo = fd[d - 1]
                    let thi = fd[d + 1]
                    let x0 = tlo < thi ? thi : tlo + 1
                    var x = x0
                    var y = x0 - d
                    while x < xlim && y < ylim && xv[x] == yv[y] {
                        x += 1
                        y += 1
                    }
                    fd[d] = x
                    if odd && bmin <= d && d <= bmax && bd[d] <= x {
                        return Partition(xmid: x, ymid: y, loMinimal: true, hiMinimal: true)
                    }
                    d -= 2
                }

                // Extend the backward search likewise.
                if bmin > dmin {
                    bmin -= 1
                    bd[bmin - 1] = Int.max
                } else {
                    bmin += 1
                }
                if bmax < dmax {
                    bmax += 1
                    bd[bmax + 1] = Int.max
                } else {
                    bmax -= 1
                }
                d = bmax
                while d >= bmin {
                    let tlo = bd[d - 1]
                    let thi = bd[d + 1]
                    let x0 = tlo < thi ? tlo : thi - 1
                    var x = x0
                    var y = x0 - d
                    while xoff < x && yoff < y && xv[x - 1] == yv[y - 1] {
                        x -= 1
                        y -= 1
                    }
                    bd[d] = x
                    if !odd && fmin <= d && d <= fmax && x <= fd[d] {
                        return Partition(xmid: x, ymid: y, loMinimal: true, hiMinimal: true)
                    }
                    d -= 2
                }

                if !minimal && cost >= tooExpensive {
                    return bestSoFar(
                        xoff, xlim, yoff, ylim, fd: fd, bd: bd, forward: (fmin, fmax), backward: (bmin, bmax))
                }
                cost += 1
            }
        }

        /// The furthest point reached so far by either search, as a split point that is not necessarily optimal.
        private func bestSoFar(
            _ xoff: Int, _ xlim: Int, _ yoff: Int, _ ylim: Int,
            fd: UnsafeMutablePointer<Int>, bd: UnsafeMutablePointer<Int>,
            forward: (lowest: Int, highest: Int), backward: (lowest: Int, highest: Int)
        ) -> Partition {
            // The forward diagonal that maximizes x + y.
            var fxybest = -1
            var fxbest = xoff
            var d = forward.highest
            while d >= forward.lowest {
                var x = min(fd[d], xlim)
                var y = x - d
                if ylim < y {
                    x = ylim + d
                    y = ylim
                }
                if fxybest < x + y {
                    fxybest = x + y
                    fxbest = x
                }
                d -= 2
            }
            // The backward diagonal that minimizes x + y.
            var bxybest = Int.max
            var bxbest = xlim
            d = backward.highest
            while d >= backward.lowest {
                var x = max(xoff, bd[d])
                var y = x - d
                if y < yoff {
                    x = yoff + d
                    y = yoff
                }
                if x + y < bxybest {
                    bxybest = x + y
                    bxbest = x
                }
                d -= 2
            }
            if (xlim + ylim) - bxybest < fxybest - (xoff + yoff) {
                return Partition(xmid: fxbest, ymid: fxybest - fxbest, loMinimal: true, hiMinimal: false)
            }
            return Partition(xmid: bxbest, ymid: bxybest - bxbest, loMinimal: false, hiMinimal: true)
        }
    }
}

// MARK: - Merge

extension LineMerge {
    /// Walks the hunks of both sides in base order, applying them or reporting a conflict.
    fileprivate struct Combiner {
        let table: LineTable
        let ours: [Hunk]
        let theirs: [Hunk]

        func combine() -> MergeResult {
            var output: [UInt8] = []
            output.reserveCapacity(max(table.ours.byteCount, table.theirs.byteCount))
            var basePosition = 0
            var oursIndex = 0
            var theirsIndex = 0
            while oursIndex < ours.count || theirsIndex < theirs.count {
                let oursFirst = oursIndex
                let theirsFirst = theirsIndex
                var low: Int
                var high: Int
                if theirsIndex >= theirs.count
                    || (oursIndex < ours.count && ours[oursIndex].baseStart <= theirs[theirsIndex].baseStart)
                {
                    low = ours[oursIndex].baseStart
                    high = ours[oursIndex].baseEnd
                    oursIndex += 1
                } else {
                    low = theirs[theirsIndex].baseStart
                    high = theirs[theirsIndex].baseEnd
                    theirsIndex += 1
                }
                // Pull in every hunk that overlaps or touches the region so far (closed ranges intersect).
                while true {
                    if oursIndex < ours.count && ours[oursIndex].baseStart <= high {
                        high = max(high, ours[oursIndex].baseEnd)
                        oursIndex += 1
                    } else if theirsIndex < theirs.count && theirs[theirsIndex].baseStart <= high {
                        high = max(high, theirs[theirsIndex].baseEnd)
                        theirsIndex += 1
                    } else {
                        break
                    }
                }

                append(table.base, from: basePosition, to: low, into: &output)
                let oursHunks = ours[oursFirst..<oursIndex]
                let theirsHunks = theirs[theirsFirst..<theirsIndex]
                if theirsHunks.isEmpty {
                    appendVersion(of: table.ours, with: oursHunks, from: low, to: high, into: &output)
                } else if oursHunks.isEmpty {
                    appendVersion(of: table.theirs, with: theirsHunks, from: low, to: high, into: &output)
                } else {
                    let oursVersion = version(of: table.ours, with: oursHunks, from: low, to: high)
                    let theirsVersion = version(of: table.theirs, with: theirsHunks, from: low, to: high)
                    guard oursVersion == theirsVersion else { return .conflict }
                    appendVersion(of: table.ours, with: oursHunks, from: low, to: high, into: &output)
                }
                basePosition = high
            }
            append(table.base, from: basePosition, to: table.base.ids.count, into: &output)
            return .merged(output)
        }

        /// The line ids a side turned base lines `low..<high` into.
        private func version(of side: SplitFile, with hunks: ArraySlice<Hunk>, from low: Int, to high: Int) -> [Int] {
            var ids: [Int] = []
            var position = low
            for hunk in hunks {
                ids.append(contentsOf: table.base.ids[position..<hunk.baseStart])
                ids.append(contentsOf: side.ids[hunk.sideStart..<hunk.sideEnd])
                position = hunk.baseEnd
            }
            ids.append(contentsOf: table.base.ids[position..<high])
            return ids
        }

        /// Appends the bytes a side turned base lines `low..<high` into.
        private func appendVersion(
            of side: SplitFile, with hunks: ArraySlice<Hunk>, from low: Int, to high: Int, into output: inout [UInt8]
        ) {
            var position = low
            for hunk in hunks {
                append(table.base, from: position, to: hunk.baseStart, into: &output)
                append(side, from: hunk.sideStart, to: hunk.sideEnd, into: &output)
                position = hunk.baseEnd
            }
            append(table.base, from: position, to: high, into: &output)
        }

        /// Appends the bytes of lines `first..<last` of `file`.
        private func append(_ file: SplitFile, from first: Int, to last: Int, into output: inout [UInt8]) {
            guard first < last else { return }
            output.append(contentsOf: table.bytes[file.bounds[first]..<file.bounds[last]])
        }
    }
}
