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

// MARK: - Merge

extension LineMerge {
    /// Walks the hunks of both sides in base order, applying them or reporting a conflict.
    struct Combiner {
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
