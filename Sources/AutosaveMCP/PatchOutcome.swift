import AutosaveKit

/// Whether a patch whose answer was lost (the agent stopped while applying it) went in, told from
/// the files as they are now: a patch is never applied twice.
///
/// A file shows the patch applied when its hunks no longer fit and their reverse does, not applied
/// when the hunks fit and their reverse does not; a hunk that only adds lines can fit both ways,
/// and then nothing can be told.
enum PatchOutcome: Equatable {
    /// Every file shows it applied.
    case applied
    /// Every file shows it not applied: it can be sent again.
    case notApplied
    /// Some files show it one way, others the other way or neither: the paths that do not show
    /// it applied.
    case unknown([String])

    /// Judges `diff` against `texts`, each file's current text (nil: there is no file), in the
    /// diff's order.
    static func judge(_ diff: UnifiedDiff, texts: [[UInt8]?]) -> PatchOutcome {
        var applied: [Bool] = []
        var notApplied: [Bool] = []
        for (file, text) in zip(diff.files, texts) {
            let forward = fits(file, text)
            let backward = fits(reversed(file), text)
            applied.append(!forward && backward)
            notApplied.append(forward && !backward)
        }
        if applied.allSatisfy({ $0 }) { return .applied }
        if notApplied.allSatisfy({ $0 }) { return .notApplied }
        return .unknown(zip(diff.files, applied).filter { !$0.1 }.map { $0.0.path })
    }

    /// Whether `file`'s change can be made to `text`.
    private static func fits(_ file: UnifiedDiff.FilePatch, _ text: [UInt8]?) -> Bool {
        switch (file.oldPath, file.newPath, text) {
        case (nil, _, let text): return text == nil  // a creation needs no file
        case (_, _, nil): return false
        case (_, nil, let text?):  // a deletion needs the whole file to be what it removes
            return (try? HunkPlacement.apply(file.hunks, to: text, path: file.path))?.isEmpty == true
        case (_, _, let text?):
            return (try? HunkPlacement.apply(file.hunks, to: text, path: file.path)) != nil
        }
    }

    /// The patch that undoes `file`'s: a creation becomes a deletion and each hunk's sides swap,
    /// placed where the earlier hunks moved its lines to.
    private static func reversed(_ file: UnifiedDiff.FilePatch) -> UnifiedDiff.FilePatch {
        var shift = 0
        let hunks = file.hunks.map { hunk in
            let start: Int
            if hunk.newLines.isEmpty {
                start = hunk.oldStart - 1 + shift  // what it removed goes after the line before it
            } else {
                start = (hunk.oldCount == 0 ? hunk.oldStart + 1 : hunk.oldStart) + shift
            }
            shift += hunk.newLines.count - hunk.oldLines.count
            var undo = hunk
            (undo.oldStart, undo.oldCount) = (max(0, start), hunk.newLines.count)
            (undo.oldLines, undo.newLines) = (hunk.newLines, hunk.oldLines)
            return undo
        }
        var undo = file
        (undo.oldPath, undo.newPath, undo.hunks) = (file.newPath, file.oldPath, hunks)
        return undo
    }
}
