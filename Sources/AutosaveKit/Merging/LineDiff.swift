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
}
