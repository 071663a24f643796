import AutosaveTestKit
import Foundation
import Testing

/// The agent driven through its CLI and its socket, as editors and scripts drive it.
@Suite struct ClientTests {
    func startAgent(_ project: TemporaryDirectory, config: String? = nil) async throws -> AgentProcess {
        try await AgentProcess.started(on: project, config: config)
    }

    func cli(_ arguments: [String], in project: TemporaryDirectory, stdin: String? = nil) async throws -> (status: Int32, stdout: String, stderr: String) {
        try await AgentProcess.client(arguments, in: project, stdin: stdin)
    }

    @Test func aWriteThroughTheCLIIsSavedAfterTheWindow() async throws {
        let project = try TemporaryDirectory()
        try project.write("notes.txt", "old\n")
        let agent = try await startAgent(project, config: #"{"autosave": {"delayMs": 200}}"#)
        let written = try await cli(["write", "notes.txt"], in: project, stdin: "new\n")
        #expect(written.status == 0)
        #expect(written.stdout == #"{"path":"notes.txt","revision":1}"#)
        #expect(try await cli(["cat", "notes.txt"], in: project).stdout == "new")
        _ = try await agent.stderrLines.first(timeout: .seconds(30), "saved") { $0.contains(" saved path=notes.txt revision=1 bytes=4") }
        #expect(try project.read("notes.txt") == "new\n")
        #expect(try await cli(["stop"], in: project).status == 0)
        #expect(await agent.exitStatus() == 0)
    }

    @Test func anAcknowledgedWriteSurvivesKillDashNine() async throws {
        let project = try TemporaryDirectory()
        try project.write("a.txt", "before\n")
        let agent = try await startAgent(project, config: #"{"autosave": {"delayMs": 60000, "maxDelayMs": 60000}}"#)
        #expect(try await cli(["write", "a.txt"], in: project, stdin: "acknowledged\n").status == 0)
        agent.signal(SIGKILL)
        _ = await agent.exitStatus()
        #expect(try project.read("a.txt") == "before\n")
        let restarted = try AgentProcess(["run", project.path])
        _ = try await restarted.stderrLines.first(timeout: .seconds(30), "recovered") { $0.contains(" recovered path=a.txt") }
        _ = try await restarted.stderrLines.first(timeout: .seconds(30), "listening") { $0.contains(" listening ") }
        #expect(try await cli(["save", "a.txt"], in: project).status == 0)
        #expect(try project.read("a.txt") == "acknowledged\n")
        restarted.signal(SIGTERM)
        #expect(await restarted.exitStatus() == 0)
    }

    /// `autosave cat big.txt | head -1` and `autosave events | head -1` crashed the CLI (a
    /// `try!` in Foundation's FileHandle, exit 132); a closed pipe now ends it quietly.
    @Test func aReaderThatGoesAwayEndsTheCommandQuietly() async throws {
        let project = try TemporaryDirectory()
        try project.write("big.txt", String(repeating: "x", count: 4_000_000))
        let agent = try await startAgent(project)
        let pipeline = "set -o pipefail; '\(AgentProcess.binary)' cat big.txt | head -c 5"
        let cat = try await AgentProcess.run(["-c", pipeline], executable: "/bin/bash", in: project.path)
        #expect(cat.status == 0, "cat | head: \(cat.stderr)")
        #expect(cat.stdout == "xxxxx")
        let events = try AgentProcess(
            ["-c", "set -o pipefail; '\(AgentProcess.binary)' events | head -1"], executable: "/bin/bash", in: project.path)
        _ = try await events.stdoutLines.first(timeout: .seconds(30), "subscribed") { $0.contains("subscribed") }
        for index in 0..<3 { try project.write("change-\(index).txt", "x") }
        #expect(await events.exitStatus() == 0, "events | head: \(events.stderrLines.elements)")
        agent.signal(SIGTERM)
        #expect(await agent.exitStatus() == 0)
    }

    /// `autosave rm` of a file that is not there exited 0 and left a buffer with `bytes: null`.
    @Test func removingAMissingFileIsRefusedAndLeavesNoBuffer() async throws {
        let project = try TemporaryDirectory()
        let agent = try await startAgent(project)
        let removed = try await cli(["rm", "missing.txt"], in: project)
        #expect(removed.status == 1)
        #expect(removed.stderr.contains("missing.txt: no such file; nothing was removed"))
        #expect(try await cli(["status", "--json"], in: project).stdout.contains("missing.txt") == false)
        agent.signal(SIGTERM)
        #expect(await agent.exitStatus() == 0)
    }

    @Test func aSecondAgentOnTheSameRootIsRefused() async throws {
        let project = try TemporaryDirectory()
        let first = try await startAgent(project)
        let second = try await AgentProcess.run(["run", project.path])
        #expect(second.status == 1)
        #expect(second.stderr.contains("an agent is already running for \(project.path) (pid \(first.processIdentifier))"))
        first.signal(SIGTERM)
        #expect(await first.exitStatus() == 0)
    }

    @Test func withoutAnAgentClientsExitWith3() async throws {
        let project = try TemporaryDirectory()
        let result = try await cli(["status"], in: project)
        #expect(result.status == 3)
        #expect(result.stderr.contains("no agent is running for \(project.path); start one with `autosave run`"))
    }

    @Test func badInputGetsErrorsAndTheAgentKeepsServing() async throws {
        let project = try TemporaryDirectory()
        let outside = try TemporaryDirectory()
        try outside.write("secret.txt", "outside")
        try FileManager.default.createSymbolicLink(atPath: project.url("escape.txt"), withDestinationPath: outside.url("secret.txt"))
        let agent = try await startAgent(project, config: #"{"limits": {"maxRequestBytes": 4096}}"#)
        let socket = project.url(".autosave/agent.sock")
        let answers = try SocketScript.run(socket: socket, lines: [
            "{not json",
            #"{"jsonrpc":"2.0","id":1,"method":"fly"}"#,
            #"{"jsonrpc":"2.0","id":2,"method":"write","params":{"path":"a.txt"}}"#,
            #"{"jsonrpc":"2.0","id":3,"method":"write","params":{"path":"../x.txt","content":"x"}}"#,
            #"{"jsonrpc":"2.0","id":4,"method":"write","params":{"path":"escape.txt","content":"x"}}"#,
            #"{"jsonrpc":"2.0","id":5,"method":"save","params":{"all":true}}"#,
            #"{"jsonrpc":"2.0","id":6,"method":"status"}"#,
        ])
        #expect(answers.count == 7)
        #expect(answers[0].contains(#""code":-32700"#))
        #expect(answers[1].contains(#""code":-32601"#) && answers[1].contains("unknown method `fly`"))
        #expect(answers[2].contains(#""code":-32602"#) && answers[2].contains("missing `content`"))
        #expect(answers[3].contains(#""code":-32000"#) && answers[3].contains("`..` leads outside the root"))
        #expect(answers[4].contains(#""code":-32000"#) && answers[4].contains("leads outside the root"), "a symlink out is refused at once")
        #expect(answers[6].contains(#""result""#))
        #expect(try outside.read("secret.txt") == "outside")
        let long = try SocketScript.run(socket: socket, lines: [String(repeating: "x", count: 10_000)])
        #expect(long.first?.contains(#""code":-32001"#) == true)
        #expect(try await cli(["status"], in: project).status == 0, "the agent still serves")
        agent.signal(SIGTERM)
        #expect(await agent.exitStatus() == 0)
    }
}

/// Talks to a socket line by line with plain POSIX calls, as a hostile or naive client would.
enum SocketScript {
    /// A new connection to the socket at `path`; the caller closes it.
    static func connect(socket path: String) throws -> Int32 {
        let fd = Foundation.socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (index, byte) in path.utf8.enumerated() where index < raw.count - 1 { raw[index] = byte }
        }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Foundation.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard connected == 0 else {
            close(fd)
            throw POSIXError(.ECONNREFUSED)
        }
        return fd
    }

    static func run(socket path: String, lines: [String]) throws -> [String] {
        let received = try exchange(socket: path, bytes: Array((lines.joined(separator: "\n") + "\n").utf8))
        return String(decoding: received, as: UTF8.self).split(separator: "\n").map(String.init)
    }

    /// Sends `bytes` on a fresh connection, ends the sending side, and returns every byte
    /// received until the agent closes.
    static func exchange(socket path: String, bytes: [UInt8]) throws -> [UInt8] {
        let fd = try connect(socket: path)
        defer { close(fd) }
        // The agent may close before reading everything (a refused request): not an error here.
        _ = bytes.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        shutdown(fd, Int32(SHUT_WR))
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = read(fd, &buffer, buffer.count)
            if count <= 0 { break }
            received += buffer[..<count]
        }
        return received
    }
}

/// Many clients at once, and clients that are not the agent's user.
@Suite struct ConcurrentClientTests {
    @Test func eightClientsTimesAThousandWritesLoseNothing() async throws {
        let project = try TemporaryDirectory()
        try project.write("autosave.json", #"{"autosave": {"delayMs": 100}}"#)
        let agent = try AgentProcess(["run", project.path])
        _ = try await agent.stderrLines.first(timeout: .seconds(30), "listening") { $0.contains(" listening ") }
        let socket = project.url(".autosave/agent.sock")
        let answers = try await withThrowingTaskGroup(of: [String].self) { group in
            for client in 0..<8 {
                group.addTask {
                    let lines = (1...1000).map { index in
                        #"{"jsonrpc":"2.0","id":\#(index),"method":"write","params":{"path":"shared.txt","content":"client \#(client) write \#(index)\n","changeId":"\#(UUID().uuidString)"}}"#
                    }
                    return try SocketScript.run(socket: socket, lines: lines)
                }
            }
            var all: [String] = []
            for try await batch in group { all += batch }
            return all
        }
        #expect(answers.count == 8000)
        #expect(answers.allSatisfy { $0.contains(#""result""#) })
        let revisions = Set(answers.compactMap { line -> Int? in
            guard let range = line.range(of: #""revision":"#) else { return nil }
            return Int(line[range.upperBound...].prefix { $0.isNumber })
        })
        #expect(revisions == Set(1...8000), "every write got its own revision")
        let status = try await AgentProcess.run(["status", "--json"], in: project.path)
        #expect(status.stdout.contains(#""revision":8000"#))
        #expect(status.stdout.contains(#""watcher":{"files":"#))
        #expect(status.stdout.contains(#""conflicts":0"#))
        let saved = try await AgentProcess.run(["save", "--all"], in: project.path)
        #expect(saved.status == 0)
        let catted = try await AgentProcess.run(["cat", "shared.txt"], in: project.path)
        #expect(try project.read("shared.txt") == catted.stdout + "\n" || project.read("shared.txt") == catted.stdout)
        agent.signal(SIGTERM)
        #expect(await agent.exitStatus() == 0)
    }

    @Test(.enabled(if: getuid() == 0, "skipped: running a client as `nobody` needs root"))
    func aClientOfAnotherUserIsRefusedAndLogged() async throws {
        let project = try TemporaryDirectory()
        let agent = try AgentProcess(["run", project.path])
        _ = try await agent.stderrLines.first(timeout: .seconds(30), "listening") { $0.contains(" listening ") }
        // Open the doors the file modes would otherwise keep shut, so the uid check is what refuses.
        chmod(project.path, 0o755)
        chmod(project.url(".autosave"), 0o755)
        chmod(project.url(".autosave/agent.sock"), 0o666)
        let result = try await AgentProcess.run(
            ["--reuid=nobody", "--regid=nogroup", "--clear-groups", AgentProcess.binary, "status", "--socket", project.url(".autosave/agent.sock")],
            executable: "/usr/bin/setpriv")
        #expect(result.status != 0)
        _ = try await agent.stderrLines.first(timeout: .seconds(30), "client-refused") { $0.contains(" client-refused ") }
        agent.signal(SIGTERM)
        #expect(await agent.exitStatus() == 0)
    }
}

/// Where the socket goes, and what subscribers see.
@Suite struct SocketPlacementTests {
    @Test func aRootTooDeepForSunPathGetsASocketElsewhereThatClientsFind() async throws {
        let base = try TemporaryDirectory()
        let deep = base.url(String(repeating: "a-long-directory-name/", count: 5) + "project")
        try FileManager.default.createDirectory(atPath: deep, withIntermediateDirectories: true)
        let agent = try AgentProcess(["run", deep])
        let listening = try await agent.stderrLines.first(timeout: .seconds(30), "listening") { $0.contains(" listening ") }
        let pointer = try String(contentsOfFile: deep + "/.autosave/agent.sock.path", encoding: .utf8)
            .trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(pointer.utf8.count <= 107)
        #expect(listening.contains("socket=\(pointer)"))
        let status = try await AgentProcess.run(["status", "--json"], in: deep)
        #expect(status.status == 0)
        #expect(status.stdout.contains(#""root":"\#(deep)""#))
        agent.signal(SIGTERM)
        #expect(await agent.exitStatus() == 0)
        #expect(!FileManager.default.fileExists(atPath: pointer), "the socket is removed on the way out")
    }

    @Test func subscribersSeeEveryEventAsAJSONLine() async throws {
        let project = try TemporaryDirectory()
        try project.write("autosave.json", #"{"autosave": {"delayMs": 100}}"#)
        let agent = try AgentProcess(["run", project.path])
        _ = try await agent.stderrLines.first(timeout: .seconds(30), "listening") { $0.contains(" listening ") }
        let events = try AgentProcess(["events"], in: project.path)
        _ = try await events.stdoutLines.first(timeout: .seconds(30), "subscribed") { $0 == #"{"subscribed":true}"# }
        try project.write("seen.txt", "x")
        _ = try await events.stdoutLines.first(timeout: .seconds(30), "external change") { $0.contains(#""event":"external-change""#) }
        _ = try await AgentProcess.run(["write", "w.txt", "--from", project.url("seen.txt")], in: project.path)
        let saved = try await events.stdoutLines.first(timeout: .seconds(30), "saved") { $0.contains(#""event":"saved""#) }
        #expect(saved.contains(#""path":"w.txt""#))
        events.signal(SIGTERM)
        _ = await events.exitStatus()
        agent.signal(SIGTERM)
        #expect(await agent.exitStatus() == 0)
    }
}
