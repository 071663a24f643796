// libFuzzer target: the unified-diff reader and hunk placement, on what a coding agent or a
// hostile client sends to `patch`. The input is a text, a line `=== patch ===`, and a patch.
// Build and run with `Fuzz/run [SECONDS]`; seeds are in Fuzz/Seeds/FuzzPatch/.
//
// Beyond "no crash, no hang" (a header may name any line, counts may lie): a patch that
// applies changes exactly what its hunks say — the text loses each hunk's old bytes and gains
// its new ones — and a one-hunk patch leaves everything around the hunk as it was, with the old
// lines where the new ones now are. And a round trip: the patch part read as a second text,
// `diff -u` of the two texts (the real GNU diff) must take the first to the second exactly.
import AutosaveKit
import Glibc

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
    roundTrip(from: text, to: patch)
    return 0
}

nonisolated(unsafe) private var diffRuns = 0
nonisolated(unsafe) private var diffFailures = 0

/// `diff -u` of `old` and `new`, read back and applied to `old`, gives `new`.
private func roundTrip(from old: [UInt8], to new: [UInt8]) {
    // Text only: diff reports files with a NUL byte as binary.
    guard !old.contains(0), !new.contains(0) else { return }
    let folder = "/tmp/fuzz-patch-\(getpid())"
    mkdir(folder, 0o700)
    guard write(old, to: folder + "/old"), write(new, to: folder + "/new"),
        let pipe = popen("diff -u \(folder)/old \(folder)/new", "r")
    else { fatalError("FuzzPatch: cannot run diff -u in \(folder)") }
    var output: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 65_536)
    while true {
        let count = fread(&chunk, 1, chunk.count, pipe)
        if count <= 0 { break }
        output += chunk[..<count]
    }
    // diff exits 0 for the same text (no patch), 1 for a patch, 2 for trouble: a fork or exec
    // that failed under the fuzzer's memory limit is not a finding, unless it is all there is.
    let status = pclose(pipe)
    guard status >= 0, status & 0x7F == 0, (status >> 8) & 0xFF == 1 else {
        if status != 0 { diffFailures += 1 }
        if diffFailures > 100, diffFailures > 10 * diffRuns { fatalError("FuzzPatch: diff -u keeps failing (status \(status))") }
        return
    }
    diffRuns += 1
    let diff: UnifiedDiff
    do { diff = try UnifiedDiff(parsing: output) } catch {
        fatalError("FuzzPatch: cannot read what diff -u wrote (\(error)):\n\(String(decoding: output, as: UTF8.self))")
    }
    guard let file = diff.files.first, diff.files.count == 1 else {
        fatalError("FuzzPatch: diff -u of two texts read as \(diff.files.count) files:\n\(String(decoding: output, as: UTF8.self))")
    }
    let patched: [UInt8]
    do { patched = try HunkPlacement.apply(file.hunks, to: old, path: "old") } catch {
        fatalError("FuzzPatch: diff -u's own patch does not apply: \(error)")
    }
    guard patched == new else { fatalError("FuzzPatch: diff -u's patch made other bytes than the text it was made to") }
}

private func write(_ bytes: [UInt8], to path: String) -> Bool {
    let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
    guard descriptor >= 0 else { return false }
    defer { close(descriptor) }
    return bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) } == bytes.count
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
