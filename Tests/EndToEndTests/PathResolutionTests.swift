import AutosaveTestKit
import Foundation
import Testing

/// Paths a user names through the CLI lead where the kernel says, symbolic links included.
@Suite struct PathResolutionTests {
    /// With `docs/current.md -> README.md`, `write docs/current.md` at the root overwrote
    /// `./README.md`: the CLI resolved the relative link against its own directory.
    @Test func aRelativeLinkIsResolvedAgainstItsOwnFolder() async throws {
        let project = try TemporaryDirectory()
        try project.write("README.md", "root readme\n")
        try project.write("docs/README.md", "docs readme\n")
        symlink("README.md", project.url("docs/current.md"))
        let agent = try await AgentProcess.started(on: project)
        #expect(try await AgentProcess.client(["cat", "docs/current.md"], in: project).stdout == "docs readme")
        #expect(try await AgentProcess.run(["cat", "current.md"], in: project.url("docs")).stdout == "docs readme")
        #expect(try await AgentProcess.client(["write", "docs/current.md"], in: project, stdin: "new docs\n").status == 0)
        #expect(try await AgentProcess.client(["save", "docs/current.md"], in: project).status == 0)
        #expect(try project.read("docs/README.md") == "new docs\n")
        #expect(try project.read("README.md") == "root readme\n")
        agent.signal(SIGTERM)
        #expect(await agent.exitStatus() == 0)
    }

    /// `lnk/../x.txt` with `lnk -> sub/deep` is `sub/x.txt` to the kernel, not `x.txt`.
    @Test func dotDotAfterALinkedFolderClimbsFromWhereTheLinkLeads() async throws {
        let project = try TemporaryDirectory()
        try project.write("sub/deep/keep.txt", "k\n")
        symlink("sub/deep", project.url("lnk"))
        let agent = try await AgentProcess.started(on: project)
        let written = try await AgentProcess.client(["write", "lnk/../x.txt"], in: project, stdin: "x\n")
        #expect(written.status == 0)
        #expect(written.stdout.contains(#""path":"sub/x.txt""#), "\(written.stdout)")
        #expect(try await AgentProcess.client(["save", "--all"], in: project).status == 0)
        #expect(try project.read("sub/x.txt") == "x\n")
        #expect(!project.exists("x.txt"))
        // The same file named through the link is the same buffer.
        #expect(try await AgentProcess.client(["cat", "lnk/../x.txt"], in: project).stdout == "x")
        let status = try await AgentProcess.client(["status"], in: project)
        #expect(status.stdout.components(separatedBy: "sub/x.txt").count == 2, "one buffer: \(status.stdout)")
        agent.signal(SIGTERM)
        #expect(await agent.exitStatus() == 0)
    }
}

/// Issue 32's walls, through the binary as a user (or a coding agent's shell) meets them.
@Suite struct WallsEndToEndTests {
    /// `ln -s .git/config cfg.txt; autosave write cfg.txt` wrote git's config through the link.
    @Test func aLinkIntoGitIsRefusedByNameAndNothingIsWritten() async throws {
        let project = try TemporaryDirectory()
        try project.write(".git/config", "[core]\n")
        symlink(".git/config", project.url("cfg.txt"))
        let agent = try await AgentProcess.started(on: project)
        let written = try await AgentProcess.client(["write", "cfg.txt"], in: project, stdin: "[core]\n\tfsmonitor = /tmp/x\n")
        #expect(written.status == 1)
        #expect(written.stderr.contains("cfg.txt is a link to .git/config, inside .git/, which is git's own"), "\(written.stderr)")
        #expect(try project.read(".git/config") == "[core]\n")
        agent.signal(SIGTERM)
        #expect(await agent.exitStatus() == 0)
    }

    /// A repository can ship `.autosave/journal -> /somewhere`: unsaved edits would land there.
    @Test func aLinkInTheStateDirectoryStopsTheAgentWithExit2() async throws {
        let project = try TemporaryDirectory()
        let outside = try TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: project.url(".autosave"), withIntermediateDirectories: true)
        symlink(outside.path, project.url(".autosave/journal"))
        let run = try await AgentProcess.run(["run", project.path])
        #expect(run.status == 2)
        #expect(run.stderr.contains("\(project.url(".autosave/journal")) is a symbolic link (to \(outside.path))"), "\(run.stderr)")
        #expect(run.stderr.contains("remove it"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: outside.path).isEmpty, "nothing was written through it")
    }
}
