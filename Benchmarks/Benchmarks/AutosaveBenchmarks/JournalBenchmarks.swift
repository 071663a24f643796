// Journal appends per second: the step that makes an accepted edit survive a crash before the
// client hears "accepted" (EditJournal, on a real directory on disk).
import AutosaveKit
import Benchmark
import Foundation

/// A fresh journal in a scratch directory, and the record of a small edit to append to it.
final class JournalFixture {
    let fsync: Bool
    var scratch: ScratchDirectory?
    var journal: EditJournal?
    var record = JournalRecord(kind: .write, path: "src/notes.txt", revision: 0)

    init(fsync: Bool) {
        self.fsync = fsync
    }

    func setUp() throws {
        let scratch = try ScratchDirectory(purpose: fsync ? "journal-fsync" : "journal")
        self.scratch = scratch
        let (journal, recovery) = try EditJournal.open(directory: scratch.path + "/journal", fsync: fsync)
        guard recovery.records.isEmpty else {
            throw BenchmarkSetupError("a fresh journal in \(scratch.path) recovered \(recovery.records.count) records")
        }
        self.journal = journal
        // A typical small document edit: 256 bytes of content, a change id and a base digest.
        let content = Array(repeating: UInt8(ascii: "x"), count: 255) + [UInt8(ascii: "\n")]
        record = JournalRecord(
            kind: .write, path: "src/notes.txt", revision: 0, changeID: UUID(), content: content,
            baseDigest: ContentDigest.of(content))
    }

    /// Checks that the appends reached the file, then removes it.
    func tearDown() async throws {
        defer { scratch?.remove() }
        guard let journal else { return }
        let size = await journal.byteCount
        guard size > record.content.count else {
            throw BenchmarkSetupError("the journal benchmark's file holds only \(size) bytes after the run")
        }
    }

    /// Appends `count` records, one after the other (each waits for its fsync when fsync is on).
    func appendSequentially(_ count: Int) async {
        guard let journal else { fatalError("the journal benchmark's setup did not run") }
        var record = self.record
        for _ in 0..<count {
            record.revision += 1
            do { try await journal.append(record) } catch { fatalError("journal append failed: \(error)") }
        }
        self.record = record
    }

    /// Appends `count` records from `writers` concurrent tasks, as clients editing different files
    /// do; with fsync on, appends that arrive during an fsync share the next one (group commit).
    func appendConcurrently(_ count: Int, writers: Int) async {
        guard let journal else { fatalError("the journal benchmark's setup did not run") }
        let template = record
        await withTaskGroup(of: Void.self) { group in
            for writer in 0..<writers {
                group.addTask {
                    var record = template
                    record.path = "src/file\(writer).txt"
                    for revision in stride(from: writer, to: count, by: writers) {
                        record.revision = revision + 1
                        do { try await journal.append(record) } catch { fatalError("journal append failed: \(error)") }
                    }
                }
            }
        }
    }
}

func registerJournalBenchmarks() {
    let unsynced = JournalFixture(fsync: false)
    Benchmark(
        "Journal: EditJournal.append, fsync off (per append, 256 B edit)",
        configuration: .init(
            scalingFactor: .kilo, maxDuration: .seconds(2), setup: { try unsynced.setUp() },
            teardown: { try await unsynced.tearDown() })
    ) { benchmark in
        await unsynced.appendSequentially(benchmark.scaledIterations.count)
    }

    let synced = JournalFixture(fsync: true)
    Benchmark(
        "Journal: EditJournal.append, fsync on, one writer (per append)",
        configuration: .init(
            maxDuration: .seconds(3), maxIterations: 2_000, setup: { try synced.setUp() },
            teardown: { try await synced.tearDown() })
    ) { benchmark in
        await synced.appendSequentially(benchmark.scaledIterations.count)
    }

    let grouped = JournalFixture(fsync: true)
    Benchmark(
        "Journal: EditJournal.append, fsync on, 8 concurrent writers (per append)",
        configuration: .init(
            scalingFactor: .kilo, maxDuration: .seconds(3), maxIterations: 50, setup: { try grouped.setUp() },
            teardown: { try await grouped.tearDown() })
    ) { benchmark in
        await grouped.appendConcurrently(benchmark.scaledIterations.count, writers: 8)
    }
}
