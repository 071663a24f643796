@testable import AutosaveKit
import AutosaveTestKit
import Foundation
import Synchronization
import Testing

/// `save` and `close` answer once the buffer's text is on disk. A save that found its file
/// changed (and merged), or gone (to be written again), returned as if it had written: `save`
/// answered before the file held the edit, and `close` forgot the buffer with the merge never
/// written, so the client's edit was lost. Found by an adversarial run of the binary (client
/// `write`, then `sed -i`, `echo >>`, `git checkout`, `rm` or `mv`, then `close` within 50 ms:
/// lost 20 times in 20).
@Suite struct ExplicitSaveTests {
    static let base = "line0\nline1\nline2\nline3\n"
    static let client = "CLIENT0\nline1\nline2\nline3\n"

    @Test func closeRightAfterAnOutsideEditSavesTheMerge() async throws {
        let harness = try await WorkspaceHarness(files: ["f.txt": Self.base])
        _ = try await harness.write("f.txt", Self.client)
        try harness.project.write("f.txt", "line0\nline1\nline2\nSED3\n")
        try await harness.workspace.close("f.txt")
        #expect(try harness.project.read("f.txt") == "CLIENT0\nline1\nline2\nSED3\n", "both edits on disk")
        #expect(await harness.workspace.status().isEmpty)
        await harness.stop()
    }

    @Test func saveRightAfterAnOutsideEditAnswersWithTheMergeOnDisk() async throws {
        let harness = try await WorkspaceHarness(files: ["f.txt": Self.base])
        _ = try await harness.write("f.txt", Self.client)
        try harness.project.write("f.txt", Self.base + "appended\n")
        try await harness.workspace.save(["f.txt"])
        #expect(try harness.project.read("f.txt") == Self.client + "appended\n")
        #expect(await harness.workspace.status().first?.isDirty == false)
        await harness.stop()
    }

    @Test func closeRightAfterTheFileWasRemovedWritesItAgain() async throws {
        let harness = try await WorkspaceHarness(files: ["f.txt": Self.base])
        _ = try await harness.write("f.txt", Self.client)
        try FileManager.default.removeItem(atPath: harness.project.url("f.txt"))
        try await harness.workspace.close("f.txt")
        #expect(try harness.project.read("f.txt") == Self.client)
        await harness.stop()
    }

    /// The rename has not settled when `close` comes: the buffer follows its file to where it
    /// went and saves there. It used to write its old name again, a ghost beside the file someone
    /// had just moved away (issue 33, item 14).
    @Test func closeRightAfterTheFileWasRenamedSavesWhereTheFileWent() async throws {
        let harness = try await WorkspaceHarness(files: ["f.txt": Self.base])
        _ = try await harness.write("f.txt", Self.client)
        try FileManager.default.moveItem(atPath: harness.project.url("f.txt"), toPath: harness.project.url("g.txt"))
        try await harness.workspace.close("f.txt")
        #expect(try harness.project.read("g.txt") == Self.client)
        #expect(!harness.project.exists("f.txt"), "no ghost at the old name")
        #expect(await harness.workspace.status().isEmpty)
        await harness.stop()
    }

    /// The same with `save`, and the file renamed twice before the news arrives.
    @Test func saveRightAfterTwoRenamesSavesWhereTheFileEndedUp() async throws {
        let harness = try await WorkspaceHarness(files: ["f.txt": Self.base])
        _ = try await harness.write("f.txt", Self.client)
        try FileManager.default.moveItem(atPath: harness.project.url("f.txt"), toPath: harness.project.url("away.txt"))
        try FileManager.default.moveItem(atPath: harness.project.url("away.txt"), toPath: harness.project.url("h.txt"))
        try await harness.workspace.save(["f.txt"])
        #expect(try harness.project.read("h.txt") == Self.client)
        #expect(!harness.project.exists("f.txt") && !harness.project.exists("away.txt"), "no ghost at either old name")
        await harness.stop()
    }

    /// f.txt with a second name, other.txt, known to the agent, and the client's edit in f.txt's buffer.
    static func editedFileOfTwoNames() async throws -> WorkspaceHarness {
        let harness = try await WorkspaceHarness(files: ["f.txt": Self.base])
        guard link(harness.project.url("f.txt"), harness.project.url("other.txt")) == 0 else { throw POSIXError(.EIO) }
        await harness.settleExternalChanges()
        _ = try await harness.write("f.txt", Self.client)
        return harness
    }

    /// A file of two names (hard links), one of them renamed just before `save`: the buffer
    /// follows the rename the kernel paired from its name (found by the view-equals-disk
    /// exploration: it wrote its old name again, a ghost); the other name keeps the file.
    @Test func saveRightAfterARenameOfOneOfTwoNamesSavesWhereThatNameWent() async throws {
        let harness = try await Self.editedFileOfTwoNames()
        try FileManager.default.moveItem(atPath: harness.project.url("f.txt"), toPath: harness.project.url("g.txt"))
        try await harness.workspace.save(["f.txt"])
        #expect(await harness.workspace.status().map(\.path) == ["g.txt"])
        #expect(try harness.project.read("g.txt") == Self.client)
        #expect(try harness.project.read("other.txt") == Self.client, "saved in place: one file, two names")
        #expect(!harness.project.exists("f.txt"), "no ghost at the old name")
        await harness.stop()
    }

    /// One name of two unlinked just before `save`: nothing moved, and the buffer writes its
    /// own name again (the other name is not where its file went).
    @Test func saveRightAfterOneOfTwoNamesWasRemovedWritesItAgain() async throws {
        let harness = try await Self.editedFileOfTwoNames()
        try harness.project.remove("f.txt")
        try await harness.workspace.save(["f.txt"])
        #expect(await harness.workspace.status().map(\.path) == ["f.txt"])
        #expect(try harness.project.read("f.txt") == Self.client)
        await harness.stop()
    }

    /// A file some tool rewrites under every attempt (fault injection: before each compare-and-swap)
    /// is not given up on silently: `close` fails, saying so, and the buffer stays open with every
    /// version merged into it.
    @Test func aFileThatChangesUnderEverySaveKeepsItsBufferOpen() async throws {
        let rewrites = Mutex(0)
        let target = Mutex("")
        let harness = try await WorkspaceHarness(files: ["f.txt": Self.base], beforeCommit: { _ in
            let count = rewrites.withLock { count in
                count += 1
                return count
            }
            let path = target.withLock { $0 }
            let text = (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
            try? TemporaryDirectory.writeFile(path, Array((text + "outside \(count)\n").utf8))
        })
        target.withLock { $0 = harness.project.url("f.txt") }
        _ = try await harness.write("f.txt", Self.client)
        await #expect {
            try await harness.workspace.close("f.txt")
        } throws: { error in
            "\(error)" == "saving f.txt failed: f.txt changed on disk since it was read; nothing was written; the buffer stays dirty and retries"
        }
        #expect(rewrites.withLock { $0 } == FileBuffer<ManualClock>.explicitSaveAttempts)
        let status = try #require(await harness.workspace.status().first)
        #expect(status.path == "f.txt" && status.isDirty, "still open, still dirty")
        let merged = Self.client + (1...FileBuffer<ManualClock>.explicitSaveAttempts).map { "outside \($0)\n" }.joined()
        #expect(try await harness.text("f.txt") == merged)
        await harness.stop()
    }
}
