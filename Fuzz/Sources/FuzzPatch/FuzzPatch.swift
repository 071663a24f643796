// libFuzzer target: the unified-diff reader and hunk placement, on what a coding agent or a
// hostile client sends to `patch`. The input is a text, a line `=== patch ===`, and a patch.
// Build and run with `Fuzz/run [SECONDS]`; seeds are in Fuzz/Seeds/FuzzPatch/.
//
// Beyond "no crash, no hang" (a header may name any line, counts may lie): a patch that
// applies changes exactly what its hunks say — the text loses each hunk's old bytes and gains
// its new ones — and a one-hunk patch leaves everything around the hunk as it was, with the old
// lines where the new ones now are.
import AutosaveKit

/// One fuzz input: a text and a patch for it.
func fuzzPatch(_ input: UnsafeBufferPointer<UInt8>) -> CInt {
    let bytes = Array(input)
    let separator = Array("=== patch ===\n".utf8)
    let cut = bytes.firstRange(of: separator)
    let text = cut.map { Array(bytes[..<$0.lowerBound]) } ?? []
    let patch = cut.map { Array(bytes[$0.upperBound...]) } ?? bytes
    guard let diff = try? UnifiedDiff(parsing: patch) else { return 0 }
    for file in diff.files {
        guard let patched = try? HunkPlacement.apply(file.hunks, to: text, path: file.path) else { continue }
        let removed = file.hunks.reduce(0) { $0 + $1.oldLines.reduce(0) { $0 + $1.count } }
        let added = file.hunks.reduce(0) { $0 + $1.newLines.reduce(0) { $0 + $1.count } }
        guard patched.count == text.count - removed + added else {
            fatalError("FuzzPatch: \(text.count) bytes - \(removed) + \(added) became \(patched.count)")
        }
        if file.hunks.count == 1 { expectOnlyTheHunkChanged(file.hunks[0], text: text, patched: patched) }
    }
    return 0
}

/// Some place `p` has the hunk's old lines in `text` and its new lines in `patched`, with
/// everything before and after `p` the same in both.
private func expectOnlyTheHunkChanged(_ hunk: UnifiedDiff.Hunk, text: [UInt8], patched: [UInt8]) {
    let old = hunk.oldLines.flatMap { $0 }
    let new = hunk.newLines.flatMap { $0 }
    let prefix = zip(text, patched).prefix { $0 == $1 }.count
    let suffix = zip(text.reversed(), patched.reversed()).prefix { $0 == $1 }.count
    let lowest = max(0, text.count - old.count - suffix)
    guard lowest <= min(prefix, text.count - old.count) else {
        fatalError("FuzzPatch: the patched text differs from the text outside the hunk")
    }
    for p in lowest...min(prefix, text.count - old.count)
    where Array(text[p..<(p + old.count)]) == old && Array(patched[p..<(p + new.count)]) == new {
        return
    }
    fatalError("FuzzPatch: no place in the text has the hunk's old lines where the patched text has its new ones")
}
