import AutosaveTestKit
import Foundation
import Testing

/// Sockets we can trust (issue 32, parts 3 and 6), with two real users: the tests run as root and
/// step down to `nobody` with `setpriv` to play the other user, who plants sockets, squats the
/// private socket directory, or runs an agent of their own.
///
/// Elsewhere (not root, no `setpriv`, no `nobody`/`nogroup`) the suite is skipped with the reason.
@Suite(.enabled(if: OtherUser.isAvailable, "skipped: needs root, /usr/bin/setpriv and the user nobody (group nogroup) to act as another user"))
struct SocketTrustTests {
    /// How a client is led to a socket: each must end at the same check.
    enum Route: String, CaseIterable, CustomTestStringConvertible {
        case option = "--socket"
        case environment = "AUTOSAVE_SOCKET"
        case pointerFile = ".autosave/agent.sock.path"
        var testDescription: String { rawValue }
    }

    /// A socket another user planted, reached through `--socket`, `AUTOSAVE_SOCKET` or a pointer
    /// file a cloned repository shipped: the CLI must refuse it before sending a byte, say whose it
    /// is, and exit 4. Before the fix the CLI sent the user's text to it and printed its fake
    /// `{"revision":1}` with exit status 0. `show` connects without NIO, with its own blocking
    /// connection: the same check.
    @Test(arguments: Route.allCases, ["write", "show"])
    func aSocketOfAnotherUserIsRefusedBeforeAnythingIsSent(_ route: Route, _ command: String) async throws {
        let base = try TemporaryDirectory()
        chmod(base.path, 0o755)
        let nest = try OtherUser.directory(base.url("theirs"))
        let socket = nest + "/agent.sock"
        let planted = try await PlantedServer(socket: socket)
        try base.makeDirectory("project")
        let project = base.url("project")
        let input = try base.write("input.txt", "my secret text\n")
        var arguments = command == "show" ? ["show", "notes.txt@-1"] : ["write", "notes.txt", "--from", input]
        var executable = AgentProcess.binary
        switch route {
        case .option:
            arguments += ["--socket", socket]
        case .environment:
            arguments = ["AUTOSAVE_SOCKET=\(socket)", AgentProcess.binary] + arguments
            executable = "/usr/bin/env"
        case .pointerFile:
            try base.write("project/.autosave/agent.sock.path", socket + "\n")
        }
        let result = try await AgentProcess.run(arguments, executable: executable, in: project)
        #expect(result.status == 4, "exit 4: another user's socket; stderr: \(result.stderr)")
        #expect(result.stdout.isEmpty, "nothing the planted server said is printed")
        #expect(result.stderr.contains("refused the socket \(socket)"))
        #expect(result.stderr.contains("runs as user nobody, not as you (user root)"))
        #expect(result.stderr.contains("nothing was sent to it"))
        #expect(result.stderr.contains(route == .pointerFile ? "named by \(project)/.autosave/agent.sock.path" : "named by \(route.rawValue)"))
        let received = try await planted.firstConnection()
        #expect(received == 0, "the planted server received \(received) bytes")
        #expect(!FileManager.default.fileExists(atPath: base.url("project/notes.txt")))
    }

    /// git's fsmonitor hook trusts what it hears: a socket another user planted (a pointer file a
    /// cloned repository shipped) could hide every change from `git status`. The hook refuses it
    /// before sending a byte and answers `/`, so git looks at everything itself.
    @Test func gitsFsmonitorHookTrustsNoPlantedSocket() async throws {
        let base = try TemporaryDirectory()
        chmod(base.path, 0o755)
        let socket = try OtherUser.directory(base.url("theirs")) + "/agent.sock"
        let planted = try await PlantedServer(socket: socket)
        try base.write("project/.autosave/agent.sock.path", socket + "\n")
        let hook = try await AgentProcess.run(["fsmonitor", "2", "autosave:0123456789abcdef:3"], in: base.url("project"))
        #expect(hook.status == 0)
        let parts = hook.stdout.split(separator: "\0", omittingEmptySubsequences: false)
        #expect(parts.first?.hasPrefix("autosave:") == true)
        #expect(parts.dropFirst() == ["/"], "git must look at everything: \(hook.stdout)")
        #expect(try await planted.firstConnection() == 0, "the planted server received nothing")
    }

    /// `autosave mcp` looks for a running agent the way the CLI does: a pointer file naming another
    /// user's socket must not make it join that socket. It refuses it with nothing sent, runs its
    /// own agent (whose socket takes the pointer's place) and serves through that. Before the fix
    /// it joined the planted server (`mcp-joined`) and sent it its requests.
    @Test func mcpRefusesAPlantedSocketAndRunsItsOwnAgent() async throws {
        let base = try TemporaryDirectory()
        chmod(base.path, 0o755)
        let socket = try OtherUser.directory(base.url("theirs")) + "/agent.sock"
        let planted = try await PlantedServer(socket: socket)
        try base.write("project/.autosave/agent.sock.path", socket + "\n")
        let mcp = try await AgentProcess.run(["mcp", base.url("project")])
        #expect(mcp.status == 0, "\(mcp.stderr)")
        #expect(!mcp.stderr.contains(" mcp-joined "), "\(mcp.stderr)")
        #expect(mcp.stderr.contains(" mcp-serving agent=in-process socket=\(base.url("project/.autosave/agent.sock"))"))
        #expect(try await planted.firstConnection() == 0, "the planted server received nothing")
        #expect(!base.exists("project/.autosave/agent.sock.path"), "the agent's own socket replaced the planted pointer")
    }

    /// With no `XDG_RUNTIME_DIR` and a root too deep for `<stateDir>/agent.sock`, the socket goes to
    /// the user's private directory `$TMPDIR/autosave-<uid>` (`/tmp` when TMPDIR is unset; a
    /// sticky directory of the test's own stands in for it, so other agents on this machine keep
    /// theirs). Another user made that directory first and listens in it: the agent must still
    /// start, say whose the directory is, and listen in a fresh private directory of its own,
    /// which it removes when it stops. Before the fix the socket was a fixed name in the
    /// world-writable `/tmp`, and squatting it stopped the agent from starting.
    @Test func aPrivateDirectoryTakenByAnotherUserDoesNotStopTheAgent() async throws {
        let base = try TemporaryDirectory()
        chmod(base.path, 0o755)
        try base.makeDirectory("tmp")
        chmod(base.url("tmp"), 0o1777)
        let squatted = base.url("tmp/autosave-\(getuid())")
        try OtherUser.run(["/bin/mkdir", "-m", "0755", squatted])
        let planted = try await PlantedServer(socket: squatted + "/squat.sock")
        let deep = base.url("project/" + String(repeating: "a-long-directory-name/", count: 5) + "root")
        try FileManager.default.createDirectory(atPath: deep, withIntermediateDirectories: true)
        let agent = try AgentProcess(
            ["-u", "XDG_RUNTIME_DIR", "TMPDIR=\(base.url("tmp"))", AgentProcess.binary, "run", deep], executable: "/usr/bin/env")
        _ = try await agent.stderrLines.first(timeout: .seconds(30), "ready") { $0.contains(" ready ") || $0.contains("start-failed") }
        let ignored = agent.stderrLines.elements.first { $0.contains(" socket-dir-ignored ") }
        #expect(ignored?.contains("path=\(squatted)") == true, "\(agent.stderrLines.elements)")
        #expect(ignored?.contains("belongs to user nobody") == true)
        let pointer = try String(contentsOfFile: deep + "/.autosave/agent.sock.path", encoding: .utf8)
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let own = (pointer as NSString).deletingLastPathComponent
        #expect(own.hasPrefix(squatted + "-"), "a fresh directory beside the squatted one: \(pointer)")
        var status = stat()
        #expect(lstat(own, &status) == 0 && status.st_uid == getuid() && status.st_mode & 0o7777 == 0o700, "ours, mode 0700")
        let input = try base.write("input.txt", "hello\n")
        let written = try await AgentProcess.run(["write", "notes.txt", "--from", input], in: deep)
        #expect(written.status == 0, "\(written.stderr)")
        #expect(written.stdout == #"{"path":"notes.txt","revision":1}"#)
        let read = try await AgentProcess.run(["cat", "notes.txt"], in: deep)
        #expect(read.stdout == "hello")
        agent.signal(SIGTERM)
        #expect(await agent.exitStatus() == 0)
        #expect(!FileManager.default.fileExists(atPath: own), "the directory made for the run is removed")
        #expect(!FileManager.default.fileExists(atPath: deep + "/.autosave/agent.sock.path"), "and the pointer to it")
        #expect(FileManager.default.fileExists(atPath: squatted + "/squat.sock"), "the other user's directory is left alone")
        #expect(planted.connections.isEmpty, "nothing connected to the squatter")
    }

    /// An agent of root's on a folder `nobody` may enter: `nobody`'s `status` and `stop` say whose
    /// agent it is (exit 4) instead of "no agent is running … start one", and `nobody`'s `run`
    /// names root instead of a bare "Permission denied". Before the fix: exit 3, "no agent".
    @Test func anotherUsersStatusAndStopNameTheAgentsUser() async throws {
        let project = try TemporaryDirectory()
        chmod(project.path, 0o755)
        let agent = try await AgentProcess.started(on: project)
        for command in ["status", "stop"] {
            let result = try await OtherUser.runAutosave([command], in: project.path)
            #expect(result.status == 4, "\(command): \(result.stderr)")
            #expect(result.stderr.contains("an agent of user root is running for \(project.path)"), "\(command): \(result.stderr)")
            #expect(!result.stderr.contains("no agent is running"))
        }
        let run = try await OtherUser.runAutosave(["run", project.path], in: project.path)
        #expect(run.status == 1)
        #expect(run.stderr.contains("its state directory \(project.path)/.autosave belongs to user root"), "\(run.stderr)")
        #expect(try await AgentProcess.run(["status"], in: project.path).status == 0, "root's agent still serves root")
        agent.signal(SIGTERM)
        #expect(await agent.exitStatus() == 0)
    }

    /// The other way round: an agent of `nobody`'s, and root's commands in its folder. Root can
    /// enter every directory, but its client talks to no agent of another user (the agent would
    /// answer anything it liked, and it serves only its own user anyway): `status` names the user
    /// and the pid (root can read the lock), and `--socket` at that agent is refused by the peer
    /// check. Before the fix: exit 1, "the agent closed the connection before answering".
    @Test func rootsCommandsNameAnotherUsersAgentAndSendItNothing() async throws {
        let base = try TemporaryDirectory()
        chmod(base.path, 0o755)
        let folder = try OtherUser.directory(base.url("theirs"))
        let agent = try AgentProcess(OtherUser.setpriv + [AgentProcess.binary, "run", folder], executable: "/usr/bin/setpriv")
        _ = try await agent.stderrLines.first(timeout: .seconds(30), "ready") { $0.contains(" ready ") }
        let status = try await AgentProcess.run(["status"], in: folder)
        #expect(status.status == 4, "\(status.stderr)")
        #expect(status.stderr.contains("an agent of user nobody is running for \(folder) (pid \(agent.processIdentifier))"), "\(status.stderr)")
        let direct = try await AgentProcess.run(["status", "--socket", folder + "/.autosave/agent.sock"], in: base.path)
        #expect(direct.status == 4, "\(direct.stderr)")
        #expect(direct.stderr.contains("refused the socket \(folder)/.autosave/agent.sock (named by --socket)"), "\(direct.stderr)")
        #expect(direct.stderr.contains("runs as user nobody"))
        agent.signal(SIGTERM)
        #expect(await agent.exitStatus() == 0)
    }
}
