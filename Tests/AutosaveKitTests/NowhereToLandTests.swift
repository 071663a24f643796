@testable import AutosaveKit
import AutosaveTestKit
import Foundation
import Logging
import Testing

/// Every accepted edit lands on disk somewhere: at its path, or as a conflict copy; an edit that
/// could land nowhere is refused before it is accepted.
@Suite struct NowhereToLandTests {
    /// `write nodir/sub/f.txt` was acknowledged, then its save failed for ever.
    @Test func aWriteUnderAMissingFolderIsRefusedAndLeavesNoBuffer() async throws {
        let harness = try await WorkspaceHarness()
        await #expect(throws: WorkspaceError.noSuchFolder(path: "nodir/sub/f.txt", folder: "nodir/sub")) {
            try await harness.workspace.write("nodir/sub/f.txt", Array("edit\n".utf8))
        }
        #expect(await harness.workspace.status().isEmpty)
        // A file, not a folder, on the way: refused too (it cannot be read as a folder).
        try harness.project.write("plain.txt", "x")
        await #expect(throws: WorkspaceError.self) {
            try await harness.workspace.write("plain.txt/f.txt", Array("edit\n".utf8))
        }
        #expect(await harness.workspace.status().isEmpty)
        await harness.stop()
    }

    @Test func createParentsMakesTheFoldersInsideTheRootAndSaves() async throws {
        let harness = try await WorkspaceHarness(files: ["keep/a.txt": "a"])
        _ = try await harness.workspace.write("keep/new/deeper/f.txt", Array("edit\n".utf8), createParents: true)
        let made = try #require(harness.logged("folders-created").first)
        #expect(made.fields["folders"] == "keep/new,keep/new/deeper")
        try await harness.advance(by: harness.delay)
        _ = try await harness.logs.first(timeout: .seconds(20), "saved") { $0.event == "saved" }
        #expect(try harness.project.read("keep/new/deeper/f.txt") == "edit\n")
        await harness.stop()
    }

    /// A symlink to nothing leads where `echo x > link` would create the file.
    @Test func aDanglingLinkIsWrittenWhereTheKernelWouldCreateItsTarget() async throws {
        let harness = try await WorkspaceHarness(files: ["docs/keep.txt": "k"])
        symlink("../docs/new.md", harness.project.url("docs/link.md"))
        symlink("gone/new.md", harness.project.url("nowhere.md"))
        _ = try await harness.write("docs/link.md", "through the link\n")
        try await harness.advance(by: harness.delay)
        _ = try await harness.logs.first(timeout: .seconds(20), "saved") { $0.event == "saved" }
        #expect(try harness.project.read("docs/new.md") == "through the link\n")
        #expect(harness.project.exists("docs/link.md"), "the link stays a link")
        await #expect(throws: WorkspaceError.noSuchFolder(path: "nowhere.md", folder: "gone")) {
            try await harness.workspace.write("nowhere.md", Array("edit\n".utf8))
        }
        await harness.stop()
    }

    /// A dirty buffer whose folder was `rm -rf`'d retried for ever with its edit in memory only.
    @Test func aDirtyBufferWhoseFolderGoesIsCopiedAsideAndSavesWhenTheFolderIsBack() async throws {
        let harness = try await WorkspaceHarness(files: ["src/a.txt": "old\n"])
        _ = try await harness.write("src/a.txt", "unsaved edit\n")
        try FileManager.default.removeItem(atPath: harness.project.url("src"))
        await harness.settleExternalChanges()
        // First `conflict kind=removed` (writing it again soon), then the copy at the first failed save.
        for _ in 0..<100 where !harness.logged("conflict").contains(where: { $0.fields["copy"] != nil }) {
            try await harness.advance(by: .milliseconds(100))
        }
        let copied = try #require(harness.logged("conflict").first { $0.fields["copy"] != nil })
        #expect(copied.fields["kind"] == "removed")
        #expect(copied.level == .warning)
        #expect(try harness.project.read(try #require(copied.fields["copy"])) == "unsaved edit\n")
        #expect(await harness.workspace.status().map(\.path) == ["src/a.txt"], "the buffer stays open at its path")
        // Retries do not copy the same revision again.
        try await harness.advance(by: .seconds(5))
        #expect(harness.logged("conflict").filter { $0.fields["copy"] != nil }.count == 1)
        try FileManager.default.createDirectory(atPath: harness.project.url("src"), withIntermediateDirectories: false)
        try await harness.advance(until: "saved", path: "src/a.txt", step: .seconds(1), limit: 120)
        #expect(try harness.project.read("src/a.txt") == "unsaved edit\n")
        await harness.stop()
    }

    /// Stop exited 0 after "exiting with the edit unsaved".
    @Test func aFlushReportsEditsThatAreOnDiskNowhere() async throws {
        let harness = try await WorkspaceHarness(files: ["src/a.txt": "old\n", "b.txt": "b\n"]) { $0.autosave.delayMs = 60000; $0.autosave.maxDelayMs = 60000 }
        _ = try await harness.write("src/a.txt", "stranded\n")
        _ = try await harness.write("b.txt", "saved\n")
        // Fault injection with the real filesystem: the folder goes, and conflict copies cannot be made.
        try FileManager.default.removeItem(atPath: harness.project.url("src"))
        try harness.project.write(".autosave/conflicts", "a file where the copies' folder goes")
        let outcome = await harness.workspace.shutdown()
        #expect(outcome.saved == 1)
        #expect(outcome.lost == ["src/a.txt"])
        let lost = try #require(harness.logged("lost-to-disk").first)
        #expect(lost.fields["path"] == "src/a.txt")
        #expect(lost.fields["journal"] == harness.project.url(".autosave/journal"))
        #expect(try harness.project.read("b.txt") == "saved\n")
        await harness.runTask.value
    }
}
