// Edits per second into one open buffer, through the same door the socket uses (Workspace.write).
import AutosaveKit
import Benchmark
import Foundation
import Logging

/// One workspace on a scratch directory with one file open in a buffer, and two edited versions
/// of that file to write in turn (each differs from the disk, so the buffer stays dirty).
///
/// The autosave delay is an hour, so the benchmark measures accepting an edit (routing, the
/// buffer's revision, pushing the autosave window) and never a save. The journal is off here;
/// it has its own benchmarks.
final class EditFixture {
    static let path = "docs/notes.txt"
    let fileBytes: Int
    var scratch: ScratchDirectory?
    var workspace: Workspace<ContinuousClock>?
    var edits: [[UInt8]] = []

    init(fileBytes: Int) {
        self.fileBytes = fileBytes
    }

    func setUp() async throws {
        let scratch = try ScratchDirectory(purpose: "edit")
        self.scratch = scratch
        let original = Self.document(bytes: fileBytes)
        try Self.write(original, at: Self.path, in: scratch)
        edits = (["A", "B"] as [Unicode.Scalar]).map { letter in
            var edited = original
            edited[original.count / 2] = UInt8(ascii: letter)
            return edited
        }
        let workspace = Self.workspace(on: scratch)
        _ = try await workspace.open(Self.path)
        self.workspace = workspace
    }

    /// Writes `bytes` as `path` (in a folder of the scratch directory).
    static func write(_ bytes: [UInt8], at path: String, in scratch: ScratchDirectory) throws {
        let folder = (scratch.path + "/" + path as NSString).deletingLastPathComponent
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        guard FileManager.default.createFile(atPath: scratch.path + "/" + path, contents: Data(bytes)) else {
            throw BenchmarkSetupError("cannot write \(scratch.path)/\(path)")
        }
    }

    /// A workspace on `scratch` whose autosave is an hour away and whose journal is off: what is
    /// timed is accepting the edit, never a save or a journal append.
    static func workspace(on scratch: ScratchDirectory) -> Workspace<ContinuousClock> {
        var configuration = Configuration()
        configuration.autosave.delayMs = 3_600_000
        configuration.autosave.maxDelayMs = 86_400_000
        configuration.journal.enabled = false
        let resolved = ResolvedConfiguration(
            configuration: configuration, root: scratch.path, stateDirectory: scratch.path + "/.autosave", file: nil)
        return Workspace(
            configuration: resolved, clock: ContinuousClock(),
            logger: Logger(label: "autosave-bench") { _ in SwiftLogNoOpLogHandler() })
    }

    /// Saves the buffer (the one save of the run) and checks the last edit reached the disk.
    func tearDown() async throws {
        defer { scratch?.remove() }
        guard let workspace, let scratch else { return }
        let (content, revision) = try await workspace.read(Self.path)
        let result = await workspace.shutdown()
        let onDisk = FileManager.default.contents(atPath: scratch.path + "/" + Self.path).map { [UInt8]($0) }
        guard result.saved == 1, result.failed == 0, onDisk == content, revision > 1 else {
            throw BenchmarkSetupError(
                "the edit benchmark's buffer did not end up on disk: saved \(result.saved), failed \(result.failed), "
                    + "revision \(revision), disk \(onDisk == content ? "matches" : "differs")")
        }
    }

    /// Text lines of about 64 bytes, `bytes` long in all.
    static func document(bytes: Int) -> [UInt8] {
        var text: [UInt8] = []
        var line = 0
        while text.count < bytes {
            text += Array("line \(line): the quick brown fox jumps over the lazy dog, again.\n".utf8)
            line += 1
        }
        return Array(text.prefix(bytes))
    }
}

func registerEditBenchmarks() {
    // A source file, and a large one: what an edit costs as the file grows.
    for (label, bytes, scaling) in [("4 KiB", 4 << 10, BenchmarkScalingFactor.kilo), ("1 MiB", 1 << 20, .one)] {
        registerEditBenchmark(label: label, fileBytes: bytes, scalingFactor: scaling)
    }
}

private func registerEditBenchmark(label: String, fileBytes: Int, scalingFactor: BenchmarkScalingFactor) {
    let fixture = EditFixture(fileBytes: fileBytes)
    Benchmark(
        "Edit: Workspace.write into one FileBuffer (\(label), per edit)",
        configuration: .init(
            scalingFactor: scalingFactor, setup: { try await fixture.setUp() }, teardown: { try await fixture.tearDown() })
    ) { benchmark in
        guard let workspace = fixture.workspace else { fatalError("the edit benchmark's setup did not run") }
        let edits = fixture.edits
        for index in benchmark.scaledIterations {
            do {
                blackHole(try await workspace.write(EditFixture.path, edits[index & 1]))
            } catch {
                fatalError("write \(EditFixture.path) failed: \(error)")
            }
        }
    }
}
