// One-character ranged edits per second into a large open buffer, through the same door the
// socket's `edit` uses (Workspace.acceptEdits): what a keystroke costs in a 10 MiB file.
import AutosaveKit
import Benchmark
import Foundation
import Logging

/// One workspace on a scratch directory with a 10 MiB file open in a buffer, and a fixed list of
/// one-letter insertions at places spread over the whole file (utf-8 positions).
///
/// Insertions only make lines longer, so every position, picked inside a line of the original
/// text, stays valid however many edits came before it. The autosave delay is an hour and the
/// journal is off, so the benchmark measures accepting the edit (placing it, the buffer's new
/// revision, pushing the autosave window) and never a save or a journal append.
final class RangedEditFixture {
    static let path = "docs/big.txt"
    let fileBytes: Int
    var scratch: ScratchDirectory?
    var workspace: Workspace<ContinuousClock>?
    var edits: [TextEdit] = []
    /// Edits the buffer has taken, the set-up's probe included.
    var applied = 0

    init(fileBytes: Int) {
        self.fileBytes = fileBytes
    }

    func setUp() async throws {
        let scratch = try ScratchDirectory(purpose: "ranged-edit")
        self.scratch = scratch
        let original = EditFixture.document(bytes: fileBytes)
        try EditFixture.write(original, at: Self.path, in: scratch)
        let lineStarts = Self.lineStarts(of: original)
        edits = Self.insertions(count: 4096, lineStarts: lineStarts, byteCount: original.count)
        let workspace = EditFixture.workspace(on: scratch)
        _ = try await workspace.open(Self.path)
        self.workspace = workspace
        // A probe: the first edit's letter must land at the byte its position names.
        let probe = edits[0]
        _ = try await workspace.acceptEdits(Self.path, [probe], encoding: .utf8)
        applied = 1
        let (content, _) = try await workspace.read(Self.path)
        let offset = lineStarts[probe.range.start.line] + probe.range.start.character
        guard let content, content.count == original.count + 1, content[offset] == probe.text[0] else {
            throw BenchmarkSetupError(
                "the ranged edit \(probe.range) did not insert \(probe.text) at byte \(offset) of \(Self.path)")
        }
    }

    /// Saves the buffer (the one save of the run) and checks it grew by one byte per edit and
    /// reached the disk.
    func tearDown() async throws {
        defer { scratch?.remove() }
        guard let workspace, let scratch else { return }
        let (content, revision) = try await workspace.read(Self.path)
        let result = await workspace.shutdown()
        let onDisk = FileManager.default.contents(atPath: scratch.path + "/" + Self.path).map { [UInt8]($0) }
        guard result.saved == 1, result.failed == 0, let content, onDisk == content, content.count == fileBytes + applied else {
            throw BenchmarkSetupError(
                "the ranged edit benchmark's buffer is not what \(applied) insertions make, or did not reach the disk: saved "
                    + "\(result.saved), failed \(result.failed), revision \(revision), \(content?.count ?? 0) bytes for "
                    + "\(fileBytes) + \(applied), disk \(onDisk == content ? "matches" : "differs")")
        }
    }

    /// The byte offset where each line starts (lines end at `\n`; the document has no `\r`).
    static func lineStarts(of text: [UInt8]) -> [Int] {
        var starts = [0]
        for (index, byte) in text.enumerated() where byte == UInt8(ascii: "\n") && index + 1 < text.count {
            starts.append(index + 1)
        }
        return starts
    }

    /// `count` one-letter insertions at pseudo-random lines and characters (a fixed sequence, so
    /// every run edits the same places).
    static func insertions(count: Int, lineStarts: [Int], byteCount: Int) -> [TextEdit] {
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        func next() -> Int {
            // SplitMix64.
            state &+= 0x9E37_79B9_7F4A_7C15
            var mixed = state
            mixed = (mixed ^ (mixed >> 30)) &* 0xBF58_476D_1CE4_E5B9
            mixed = (mixed ^ (mixed >> 27)) &* 0x94D0_49BB_1331_11EB
            return Int(truncatingIfNeeded: (mixed ^ (mixed >> 31)) >> 1)
        }
        return (0..<count).map { index in
            let line = next() % lineStarts.count
            let end = line + 1 < lineStarts.count ? lineStarts[line + 1] - 1 : byteCount
            let position = TextPosition(line: line, character: next() % (end - lineStarts[line] + 1))
            return TextEdit(range: TextRange(start: position, end: position), text: [UInt8(ascii: "a") + UInt8(index % 26)])
        }
    }
}

func registerRangedEditBenchmarks() {
    let fixture = RangedEditFixture(fileBytes: 10 << 20)
    Benchmark(
        "RangedEdit: Workspace.acceptEdits of one character into one FileBuffer (10 MiB, per edit)",
        configuration: .init(
            scalingFactor: .one, setup: { try await fixture.setUp() }, teardown: { try await fixture.tearDown() })
    ) { benchmark in
        guard let workspace = fixture.workspace else { fatalError("the ranged edit benchmark's setup did not run") }
        let edits = fixture.edits
        var applied = fixture.applied
        for _ in benchmark.scaledIterations {
            do {
                blackHole(try await workspace.acceptEdits(RangedEditFixture.path, [edits[applied % edits.count]], encoding: .utf8))
            } catch {
                fatalError("edit \(RangedEditFixture.path) failed: \(error)")
            }
            applied += 1
        }
        fixture.applied = applied
    }
}
