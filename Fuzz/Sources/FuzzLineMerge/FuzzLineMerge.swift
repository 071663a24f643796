// libFuzzer target: the three-way line merge that reconciles a dirty buffer with an external
// edit (`LineMerge.merge`). The input is base, ours and theirs separated by NUL bytes (missing
// parts are empty). Build and run with `Fuzz/run [SECONDS]`; seeds in Fuzz/Seeds/FuzzLineMerge/.
//
// A broken property is a crash (fatalError naming it), so libFuzzer keeps the input:
// - an unchanged side yields the other side; equal sides yield that side;
// - the merge is symmetric: swapping ours and theirs gives the same outcome;
// - a clean merge contains only lines that occur in one of the inputs;
// - a change far away on the other side (a distinct first line) is applied and leaves one side's
//   edits intact, and so does the other side making that change *and* the same edits, which
//   takes the diff itself through the merge rather than the short cuts for equal inputs.
import AutosaveKit

/// One fuzz input: `base NUL ours NUL theirs`.
func fuzzLineMerge(_ input: UnsafeBufferPointer<UInt8>) -> CInt {
    let parts = input.split(separator: 0, maxSplits: 2, omittingEmptySubsequences: false).map(Array.init)
    let base = parts[0]
    let ours = parts.count > 1 ? parts[1] : []
    let theirs = parts.count > 2 ? parts[2] : []

    let result = LineMerge.merge(base: base, ours: ours, theirs: theirs)
    expect(LineMerge.merge(base: base, ours: theirs, theirs: ours) == result, "merge is not symmetric")
    if case .merged(let merged) = result {
        let known = Set(lines(base) + lines(ours) + lines(theirs))
        for line in lines(merged) where !known.contains(line) {
            fatalError("FuzzLineMerge: the merge made up a line: \(String(decoding: line, as: UTF8.self).debugDescription)")
        }
    }
    expect(LineMerge.merge(base: base, ours: ours, theirs: base) == .merged(ours), "merge(b, x, b) != x")
    expect(LineMerge.merge(base: base, ours: base, theirs: theirs) == .merged(theirs), "merge(b, b, y) != y")
    expect(LineMerge.merge(base: base, ours: ours, theirs: ours) == .merged(ours), "merge(b, x, x) != x")

    // The far-away change: a first line no input contains, then a line that anchors it.
    let (oldHead, newHead) = heads(avoiding: [base, ours])
    expect(
        LineMerge.merge(base: oldHead + base, ours: oldHead + ours, theirs: newHead + base) == .merged(newHead + ours),
        "merge(H b, H x, H' b) != H' x")
    expect(
        LineMerge.merge(base: oldHead + base, ours: oldHead + ours, theirs: newHead + ours) == .merged(newHead + ours),
        "merge(H b, H x, H' x) != H' x")
    return 0
}

private func expect(_ holds: Bool, _ property: String) {
    if !holds { fatalError("FuzzLineMerge: property broken: \(property)") }
}

/// The lines of `bytes`, each with its `\n` (the last one may have none).
private func lines(_ bytes: [UInt8]) -> [[UInt8]] {
    var result: [[UInt8]] = []
    var start = 0
    for (index, byte) in bytes.enumerated() where byte == UInt8(ascii: "\n") {
        result.append(Array(bytes[start...index]))
        start = index + 1
    }
    if start < bytes.count { result.append(Array(bytes[start...])) }
    return result
}

/// Two versions of a two-line head absent from `inputs`: different first lines, the same anchor line.
private func heads(avoiding inputs: [[UInt8]]) -> (old: [UInt8], new: [UInt8]) {
    let taken = Set(inputs.flatMap(lines))
    var counter = 0
    while true {
        let old = Array("\u{1}fuzz-head-old-\(counter)\n".utf8)
        let new = Array("\u{1}fuzz-head-new-\(counter)\n".utf8)
        let anchor = Array("\u{1}fuzz-anchor-\(counter)\n".utf8)
        if taken.isDisjoint(with: [old, new, anchor]) { return (old + anchor, new + anchor) }
        counter += 1
    }
}
