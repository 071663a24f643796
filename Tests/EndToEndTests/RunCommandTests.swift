import AutosaveTestKit
import Foundation
import Testing

/// `autosave run` as a user runs it: the built binary on a real folder.
@Suite struct RunCommandTests {
    /// Starts the agent on `project` and waits for its `ready` line.
    func startAgent(_ project: TemporaryDirectory, _ extra: [String] = []) async throws -> AgentProcess {
        let agent = try AgentProcess(["run", project.path] + extra)
        _ = try await agent.stderrLines.first(timeout: .seconds(30), "ready") { $0.contains(" ready ") || $0.contains("\"event\":\"ready\"") }
        return agent
    }

    /// Writes a marker file and waits for its change: every earlier change has been logged by then.
    func flush(_ agent: AgentProcess, _ project: TemporaryDirectory, _ name: String = "marker.txt") async throws {
        try project.write(name, UUID().uuidString)
        _ = try await agent.stderrLines.first(timeout: .seconds(30), "\(name) change") {
            $0.contains("external-change") && $0.contains("path=\(name)")
        }
    }

    @Test func sedInPlaceIsLoggedOnceAsAModification() async throws {
        let project = try TemporaryDirectory()
        try project.write("docs/notes.txt", "first line\nsecond line\n")
        try project.write("src/main.c", "int main(void) { return 0; }\n")
        let agent = try await startAgent(project)
        let ready = agent.stderrLines.elements.first { $0.contains(" ready ") }!
        #expect(ready.contains("root=\(project.path)"))
        #expect(ready.contains("dirs=3"))
        #expect(ready.contains("watches=3"))
        #expect(ready.range(of: #"ms=[0-9.]+"#, options: .regularExpression) != nil)

        try runTool("/bin/sed", ["-i", "s/first/1st/", project.url("docs/notes.txt")])
        try await flush(agent, project)
        let changes = agent.stderrLines.elements.filter { $0.contains("path=docs/notes.txt") }
        #expect(changes.count == 1)
        #expect(changes.first?.hasSuffix("info external-change path=docs/notes.txt kind=modified") == true)

        agent.signal(SIGTERM)
        #expect(await agent.exitStatus() == 0)
        #expect(agent.stderrLines.elements.last?.contains(" info shutdown ") == true)
    }

    @Test func sigintStopsItCleanlyAndQuickly() async throws {
        let project = try TemporaryDirectory()
        try project.write("a.txt", "a")
        let agent = try await startAgent(project)
        let started = ContinuousClock.now
        agent.signal(SIGINT)
        #expect(await agent.exitStatus() == 0)
        let elapsed = ContinuousClock.now - started
        // The target is 200 ms; the bound here only catches a hang, since CI machines are noisy.
        print("SIGINT to exit: \(elapsed)")
        #expect(elapsed < .seconds(30))
        #expect(agent.stderrLines.elements.contains { $0.contains(" shutdown ") })
    }

    @Test func jsonLogsAreOneObjectPerLine() async throws {
        let project = try TemporaryDirectory()
        let agent = try await startAgent(project, ["--log-format", "json"])
        try project.write("new.txt", "x")
        let line = try await agent.stderrLines.first(timeout: .seconds(30), "created") { $0.contains("new.txt") }
        let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        #expect(object["event"] as? String == "external-change")
        #expect(object["level"] as? String == "info")
        #expect(object["path"] as? String == "new.txt")
        #expect(object["kind"] as? String == "created")
        #expect((object["ts"] as? String)?.hasSuffix("Z") == true)
        agent.signal(SIGTERM)
        #expect(await agent.exitStatus() == 0)
        for line in agent.stderrLines.elements {
            #expect((try? JSONSerialization.jsonObject(with: Data(line.utf8))) != nil, "not JSON: \(line)")
        }
    }

    @Test func theConfigurationFileInTheFolderIsUsed() async throws {
        let project = try TemporaryDirectory()
        try project.write("autosave.json", #"{"watch": {"ignore": ["*.log"]}, "log": {"level": "warning"}}"#)
        let agent = try AgentProcess(["run", project.path, "--log-level", "info"])
        _ = try await agent.stderrLines.first(timeout: .seconds(30), "ready") { $0.contains(" ready ") }
        try project.write("debug.log", "ignored")
        try await flush(agent, project)
        #expect(!agent.stderrLines.elements.contains { $0.contains("debug.log") })
        agent.signal(SIGTERM)
        #expect(await agent.exitStatus() == 0)
    }

    /// The terminal closing (SIGHUP) killed the agent: no flush, no `shutdown`, the socket left.
    @Test func hangUpStopsTheAgentGracefullyWithEveryEditSaved() async throws {
        let project = try TemporaryDirectory()
        let agent = try await AgentProcess.started(on: project, config: #"{"autosave": {"delayMs": 60000, "maxDelayMs": 60000}}"#)
        #expect(try await AgentProcess.client(["write", "a.txt"], in: project, stdin: "unsaved\n").status == 0)
        agent.signal(SIGHUP)
        #expect(await agent.exitStatus() == 0)
        #expect(agent.stderrLines.elements.contains { $0.contains(" shutdown ") && $0.contains("saved=1") })
        #expect(try project.read("a.txt") == "unsaved\n")
        #expect(!project.exists(".autosave/agent.sock"), "the socket is removed")
    }

    /// Start-up failures printed Foundation's error dumps (`Error Domain=NSCocoaErrorDomain
    /// Code=516 … UserInfo={…}`, "Unknown error 516"); each now names the path and the errno text.
    @Test func startUpFailuresArePlainErrors() async throws {
        let stateDirIsAFile = try TemporaryDirectory()
        try stateDirIsAFile.write(".autosave", "not a folder")
        let journalIsAFile = try TemporaryDirectory()
        try journalIsAFile.write(".autosave/journal", "not a folder")
        for (project, expected) in [
            (stateDirIsAFile, "cannot lock \(stateDirIsAFile.path)/.autosave: Not a directory"),
            (journalIsAFile, "create journal directory \(journalIsAFile.path)/.autosave/journal: Not a directory"),
        ] {
            let result = try await AgentProcess.run(["run", project.path])
            #expect(result.status == 1)
            #expect(result.stderr.contains(expected), "\(result.stderr)")
            #expect(!result.stderr.contains("Error Domain") && !result.stderr.contains("Unknown error"), "\(result.stderr)")
        }
        // A socket that cannot listen: no client could ever reach the agent, so it does not start.
        let socketIsAFolder = try TemporaryDirectory()
        try socketIsAFolder.write(".autosave/agent.sock/x", "")
        let unreachable = try await AgentProcess.run(["run", socketIsAFolder.path])
        #expect(unreachable.status == 1)
        #expect(
            unreachable.stderr.contains("cannot listen on \(socketIsAFolder.path)/.autosave/agent.sock: something other than a socket is there"),
            "\(unreachable.stderr)")
        #expect(!unreachable.stderr.contains(" ready "))
    }

    @Test(.enabled(if: SmallFilesystem.isAvailable, "mounting a read-only tmpfs needs root"))
    func aRootThatCannotBeWrittenIsAPlainError() async throws {
        let disk = try SmallFilesystem(bytes: 1 << 20)
        try Data("x\n".utf8).write(to: URL(fileURLWithPath: disk.path + "/a.txt"))
        try disk.makeReadOnly()
        let result = try await AgentProcess.run(["run", disk.path])
        #expect(result.status == 1)
        #expect(result.stderr.contains("\(disk.path)/.autosave: Read-only file system"), "\(result.stderr)")
        #expect(!result.stderr.contains("Error Domain") && !result.stderr.contains("Unknown error"), "\(result.stderr)")
    }

    /// `ready` came before the socket listened: a script that waited for it got exit 3 from the CLI.
    @Test func readyMeansAClientCanConnect() async throws {
        for _ in 0..<3 {
            let project = try TemporaryDirectory()
            let agent = try AgentProcess(["run", project.path])
            let ready = try await agent.stderrLines.first(timeout: .seconds(30), "ready") { $0.contains(" ready ") }
            #expect(ready.contains("socket=\(project.path)/.autosave/agent.sock"))
            let lines = agent.stderrLines.elements
            let listening = try #require(lines.firstIndex { $0.contains(" listening ") })
            #expect(listening < lines.firstIndex(of: ready)!, "listening, then ready")
            #expect(try await AgentProcess.client(["write", "a.txt"], in: project, stdin: "at once\n").status == 0)
            agent.signal(SIGTERM)
            #expect(await agent.exitStatus() == 0)
            #expect(try project.read("a.txt") == "at once\n")
        }
    }

    /// Under systemd (`Type=notify`): `READY=1` once a client can connect, `STOPPING=1` at shutdown.
    @Test func theServiceManagerIsToldReadyAndStopping() async throws {
        let project = try TemporaryDirectory()
        let manager = try NotifySocket(path: project.url(".notify"))
        let agent = try AgentProcess(["NOTIFY_SOCKET=\(manager.path)", AgentProcess.binary, "run", project.path], executable: "/usr/bin/env")
        #expect(try manager.receive(timeout: .seconds(30)) == "READY=1")
        #expect(project.exists(".autosave/agent.sock"), "the socket listens before READY=1")
        _ = try await agent.stderrLines.first(timeout: .seconds(30), "ready") { $0.contains(" ready ") }
        agent.signal(SIGTERM)
        #expect(try manager.receive(timeout: .seconds(30)) == "STOPPING=1")
        #expect(await agent.exitStatus() == 0)
    }

    @Test func aMissingFolderIsAUsageError() async throws {
        let result = try await AgentProcess.run(["run", "/nonexistent/autosave-e2e"])
        #expect(result.status == 2)
        #expect(result.stderr == "autosave: error: cannot keep /nonexistent/autosave-e2e safe: No such file or directory; the agent was not started")
    }
}

