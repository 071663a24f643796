import AutosaveTestKit
import Foundation
import Testing

/// Permission faults, with the agent and its clients running as an ordinary user (`nobody`):
/// root ignores file modes, so these need root to set the scene and `setpriv` to step down.
@Suite(.enabled(if: getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv"),
                "skipped: needs root and setpriv to run the agent as another user"))
struct PermissionTests {
    static let asNobody = ["--reuid=nobody", "--regid=nogroup", "--clear-groups"]

    func cli(_ arguments: [String], in project: TemporaryDirectory, stdin: String? = nil) async throws -> (status: Int32, stdout: String, stderr: String) {
        var arguments = arguments
        if let stdin {
            let input = project.url(".input-\(UUID().uuidString)")
            try Data(stdin.utf8).write(to: URL(fileURLWithPath: input))
            chmod(input, 0o644)
            arguments += ["--from", input]
        }
        return try await AgentProcess.run(Self.asNobody + [AgentProcess.binary] + arguments, executable: "/usr/bin/setpriv", in: project.path)
    }

    func startAgent(_ project: TemporaryDirectory) async throws -> AgentProcess {
        try project.write("autosave.json", #"{"autosave": {"delayMs": 50}}"#)
        try runTool("/bin/chown", ["-R", "nobody:nogroup", project.path])
        let agent = try AgentProcess(Self.asNobody + [AgentProcess.binary, "run", project.path], executable: "/usr/bin/setpriv")
        _ = try await agent.stderrLines.first(timeout: .seconds(30), "listening") { $0.contains(" listening ") }
        return agent
    }

    @Test func aDirectoryWithoutWritePermissionKeepsTheEditUntilItIsWritable() async throws {
        let project = try TemporaryDirectory()
        try project.write("locked/a.txt", "before\n")
        let agent = try await startAgent(project)
        chmod(project.url("locked"), 0o555)
        #expect(try await cli(["write", "locked/a.txt"], in: project, stdin: "mine\n").status == 0)
        let failed = try await agent.stderrLines.first(timeout: .seconds(30), "save-failed") { $0.contains(" save-failed ") }
        #expect(failed.contains("Permission denied"))
        #expect(failed.contains("path=locked/a.txt"))
        #expect(try project.read("locked/a.txt") == "before\n")
        chmod(project.url("locked"), 0o755)
        _ = try await agent.stderrLines.first(timeout: .seconds(30), "saved") { $0.contains(" saved path=locked/a.txt") }
        #expect(try project.read("locked/a.txt") == "mine\n")
        agent.signal(SIGTERM)
        #expect(await agent.exitStatus() == 0)
    }

    @Test func anUnreadableFileIsRefusedByNameAndTheAgentServesOn() async throws {
        let project = try TemporaryDirectory()
        try project.write("secret.txt", "private\n")
        let agent = try await startAgent(project)
        chmod(project.url("secret.txt"), 0o000)
        let refused = try await cli(["cat", "secret.txt"], in: project)
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("secret.txt"))
        #expect(refused.stderr.contains("Permission denied"))
        #expect(try await cli(["write", "other.txt"], in: project, stdin: "fine\n").status == 0)
        #expect(try await cli(["cat", "other.txt"], in: project).stdout == "fine")
        agent.signal(SIGTERM)
        #expect(await agent.exitStatus() == 0)
    }
}
