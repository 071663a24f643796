@_spi(Testing) @testable import AutosaveKit
import AutosaveTestKit
import Foundation
import Glibc
import Testing

/// Issue 32's holes, one test each: a link to a file that leads into `.git/` or the state
/// directory, a file that becomes a link out under an open buffer, links in the state directory,
/// and special files that would hang a read. Each failed on the code before the resolver.
@Suite struct WallsTests {
    @Test func aLinkToGitsConfigIsRefusedAndTheConfigIsUntouched() async throws {
        let harness = try await WorkspaceHarness(files: [".git/config": "[core]\n"])
        symlink(".git/config", harness.project.url("cfg.txt"))
        await #expect(throws: WorkspaceError.pathRefused(.insideGit(path: "cfg.txt", link: .init(path: "cfg.txt", target: ".git/config")))) {
            try await harness.write("cfg.txt", "[core]\n\tfsmonitor = /tmp/evil\n")
        }
        #expect(try harness.project.read(".git/config") == "[core]\n")
        let message = WorkspaceError.pathRefused(.insideGit(path: "cfg.txt", link: .init(path: "cfg.txt", target: ".git/config"))).description
        #expect(message == "cfg.txt is a link to .git/config, inside .git/, which is git's own: clients may not read or write it; nothing was read or changed")
        await #expect(throws: WorkspaceError.self) { try await harness.workspace.read("cfg.txt") }
        #expect(await harness.workspace.status().isEmpty, "no buffer is left behind")
        await harness.stop()
    }

    @Test func aDanglingLinkIntoGitHooksCreatesNoHook() async throws {
        let harness = try await WorkspaceHarness(files: [".git/HEAD": "ref\n"])
        mkdir(harness.project.url(".git/hooks"), 0o755)
        symlink("../.git/hooks/pre-commit", harness.project.url("docs-hook"))
        symlink(harness.project.url(".git/hooks/post-checkout"), harness.project.url("absolute-hook"))
        for path in ["docs-hook", "absolute-hook"] {
            await #expect(throws: WorkspaceError.self, "\(path)") {
                _ = try await harness.workspace.write(path, Array("#!/bin/sh\nrm -rf ~\n".utf8), createParents: true)
            }
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: harness.project.url(".git/hooks")).isEmpty)
        await harness.stop()
    }

    @Test func aLinkIntoTheStateDirectoryIsRefused() async throws {
        let harness = try await WorkspaceHarness()
        _ = try await harness.write("a.txt", "start the journal\n")
        symlink(".autosave/agent.lock", harness.project.url("lock.txt"))
        symlink(".autosave", harness.project.url("state"))
        await #expect(throws: WorkspaceError.pathRefused(.insideStateDirectory(path: "lock.txt", link: .init(path: "lock.txt", target: ".autosave/agent.lock")))) {
            try await harness.write("lock.txt", "999\n")
        }
        await #expect(throws: WorkspaceError.pathRefused(.insideStateDirectory(path: "state/journal/journal.log", link: .init(path: "state", target: ".autosave")))) {
            try await harness.write("state/journal/journal.log", "garbage")
        }
        await harness.stop()
    }

    /// A `git checkout` of a branch where the file is a link to a file outside the root.
    @Test func aCleanBufferWhoseFileBecomesALinkOutIsClosedNotReadThroughIt() async throws {
        let outside = try TemporaryDirectory()
        try outside.write("secret.txt", "OUTSIDE SECRET\n")
        let harness = try await WorkspaceHarness(files: ["notes.txt": "mine\n"])
        #expect(try await harness.text("notes.txt") == "mine\n")
        try harness.project.remove("notes.txt")
        symlink(outside.url("secret.txt"), harness.project.url("notes.txt"))
        await harness.settleExternalChanges()
        let refused = try await harness.logs.first(timeout: .seconds(20), "path-refused") { $0.event == "path-refused" }
        #expect(refused.fields["path"] == "notes.txt")
        #expect(await harness.workspace.status().isEmpty, "the buffer closed")
        await #expect(throws: WorkspaceError.pathRefused(.linkLeadsOutside(path: "notes.txt", link: "notes.txt", target: outside.url("secret.txt")))) {
            try await harness.workspace.read("notes.txt")
        }
        await harness.stop()
    }

    @Test func aDirtyBufferWhoseFileBecomesALinkOutKeepsItsEditsAsideAndWritesNothingOutside() async throws {
        let outside = try TemporaryDirectory()
        try outside.write("secret.txt", "OUTSIDE SECRET\n")
        let harness = try await WorkspaceHarness(files: ["notes.txt": "mine\n"])
        _ = try await harness.write("notes.txt", "mine, edited\n")
        try harness.project.remove("notes.txt")
        symlink(outside.url("secret.txt"), harness.project.url("notes.txt"))
        await harness.settleExternalChanges()
        // The buffer never took the outside file in.
        #expect(try await harness.text("notes.txt") == "mine, edited\n")
        // The write-back the removal asks for is refused, and the edits go aside instead.
        try await harness.advance(until: "save-failed", path: "notes.txt", step: .milliseconds(300), limit: 100)
        let kept = try await harness.logs.first(timeout: .seconds(20), "a conflict copy") {
            $0.event == "conflict" && $0.fields["copy"] != nil
        }
        #expect(kept.fields["copy"] != nil && kept.fields["next"]?.contains("which leads outside the root") == true, "\(kept.fields)")
        let copies = AgentFolderTree.files(below: harness.project.url(".autosave/conflicts"))
        #expect(copies.count == 1, "\(copies)")
        #expect(try copies.map { try harness.project.read(".autosave/conflicts/" + $0) } == ["mine, edited\n"])
        #expect(try outside.read("secret.txt") == "OUTSIDE SECRET\n")
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: harness.project.url("notes.txt")) == outside.url("secret.txt"))
        await harness.stop()
    }

    @Test func aLinkedFolderInTheConflictsFolderIsNotFollowed() throws {
        let project = try TemporaryDirectory()
        let outside = try TemporaryDirectory()
        mkdir(project.url(".autosave"), 0o700)
        mkdir(project.url(".autosave/conflicts"), 0o700)
        symlink(outside.path, project.url(".autosave/conflicts/docs"))
        let copies = ConflictCopies(stateDirectory: project.url(".autosave"), maxCopiesPerFile: 10, fsync: false)
        #expect(throws: WriteError.refused(.linkInAgentFolder(path: "docs/notes.txt.20261127-000000.2", link: "docs"))) {
            _ = try copies.keep(Array("edit\n".utf8), of: "docs/notes.txt", revision: 2, at: Date(timeIntervalSince1970: 1_795_737_600))
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: outside.path).isEmpty)
    }

    @Test func aStateDirectoryWithALinkIsRefusedAtStartNamingIt() throws {
        let project = try TemporaryDirectory()
        let outside = try TemporaryDirectory()
        mkdir(project.url(".autosave"), 0o700)
        symlink(outside.path, project.url(".autosave/journal"))
        #expect(throws: StateDirectory.LinkFound(path: project.url(".autosave/journal"), target: outside.path)) {
            try StateDirectory.verify(project.url(".autosave"), root: project.path)
        }
        let linkedState = try TemporaryDirectory()
        symlink(outside.path, linkedState.url(".autosave"))
        #expect(throws: StateDirectory.LinkFound(path: linkedState.url(".autosave"), target: outside.path)) {
            try StateDirectory.verify(linkedState.url(".autosave"), root: linkedState.path)
        }
        #expect(throws: Never.self) { try StateDirectory.verify(project.url("nothing-yet"), root: project.path) }
    }

    /// A journaled edit whose file became a link into `.git/` while the agent was down: the edit
    /// is kept in a conflict copy, not written through the link, and not dropped in silence (it
    /// was, before: recovery skipped a path it could not resolve without a word).
    @Test func anEditRecoveredOntoALinkIntoGitIsKeptAsideNotWrittenThroughIt() async throws {
        let project = try TemporaryDirectory()
        try project.write(".git/config", "[core]\n")
        try project.write("notes.txt", "on disk\n")
        do {
            let harness = try await WorkspaceHarness(root: project.path) { $0.journal.fsync = true }
            _ = try await harness.write("notes.txt", "acknowledged, never saved\n")
            await harness.workspace._abandon()
        }
        try project.remove("notes.txt")
        symlink(".git/config", project.url("notes.txt"))
        let restarted = try await WorkspaceHarness(root: project.path)
        let failed = try #require(restarted.logged("recover-failed").first)
        #expect(failed.fields["path"] == "notes.txt")
        #expect(failed.fields["error"]?.contains("notes.txt is a link to .git/config") == true, "\(failed.fields)")
        let copies = AgentFolderTree.files(below: project.url(".autosave/conflicts"))
        #expect(try copies.map { try project.read(".autosave/conflicts/" + $0) } == ["acknowledged, never saved\n"])
        #expect(try project.read(".git/config") == "[core]\n")
        await restarted.stop()
    }

    /// `mkfifo pipe; autosave cat pipe` never returned: opening a FIFO waits for a writer.
    @Test func aFIFOIsRefusedWithoutBeingOpened() async throws {
        let harness = try await WorkspaceHarness()
        #expect(mkfifo(harness.project.url("pipe"), 0o644) == 0)
        await #expect(throws: WorkspaceError.unreadable(.notARegularFile(path: "pipe"))) {
            try await harness.workspace.read("pipe")
        }
        await harness.stop()
    }
}
