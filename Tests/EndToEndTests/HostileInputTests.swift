import AutosaveTestKit
import Foundation
import Testing

/// Clients that misbehave, and a state directory deleted under a running agent: the agent keeps
/// serving everyone else, memory stays bounded, and nothing acknowledged is lost.
@Suite struct HostileInputTests {
    func startAgent(_ project: TemporaryDirectory, config: String? = nil) async throws -> AgentProcess {
        try await AgentProcess.started(on: project, config: config)
    }

    func cli(_ arguments: [String], in project: TemporaryDirectory, stdin: String? = nil) async throws -> (status: Int32, stdout: String, stderr: String) {
        try await AgentProcess.client(arguments, in: project, stdin: stdin)
    }

    /// The agent's resident memory, in MiB, from /proc.
    func residentMegabytes(_ agent: AgentProcess) throws -> Int {
        let status = try String(contentsOfFile: "/proc/\(agent.processIdentifier)/status", encoding: .utf8)
        let line = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") } ?? ""
        return (Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0) / 1024
    }

    @Test func aGigabyteWithoutANewlineCostsOnlyTheRequestLimit() async throws {
        let project = try TemporaryDirectory()
        let agent = try await startAgent(project, config: #"{"limits": {"maxRequestBytes": 1048576}}"#)
        let before = try residentMegabytes(agent)
        let flood = try RawSocketClient(path: project.url(".autosave/agent.sock"))
        let chunk = [UInt8](repeating: UInt8(ascii: "x"), count: 1 << 20)
        var sent = 0
        while sent < 1 << 30, let count = flood.send(chunk) { sent += count }
        #expect(sent < 64 << 20, "the agent closed the connection soon after the limit (sent \(sent) bytes)")
        _ = try await agent.stderrLines.first(timeout: .seconds(30), "request-too-large") { $0.contains(" request-too-large ") }
        #expect(try residentMegabytes(agent) < before + 64)
        #expect(try await cli(["status"], in: project).status == 0)
        agent.signal(SIGTERM)
        #expect(await agent.exitStatus() == 0)
    }

    @Test func thousandsOfIdleConnectionsDoNotStopOtherClients() async throws {
        let project = try TemporaryDirectory()
        let agent = try await startAgent(project)
        // Held by a separate process: 2,000 descriptors in the test process itself made every
        // process another test spawned meanwhile risk Foundation's Process.run, which crashed in
        // CI with descriptor numbers past 1,024.
        let holder = try AgentProcess(
            ["-c", """
                import resource, signal, socket, sys
                soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
                resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, min(hard, 4096)), hard))
                held = []
                for _ in range(2000):
                    connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                    connection.connect(sys.argv[1])
                    held.append(connection)
                print("holding", len(held), flush=True)
                signal.pause()
                """, project.url(".autosave/agent.sock")],
            executable: "/usr/bin/python3")
        _ = try await holder.stdoutLines.first(timeout: .seconds(60), "holding") { $0 == "holding 2000" }
        #expect(try await cli(["write", "a.txt"], in: project, stdin: "served\n").status == 0)
        #expect(try await cli(["cat", "a.txt"], in: project).stdout == "served")
        #expect(try residentMegabytes(agent) < 400, "2,000 idle connections cost bounded memory")
        holder.signal(SIGTERM)
        _ = await holder.exitStatus()
        agent.signal(SIGTERM)
        #expect(await agent.exitStatus() == 0)
    }

    @Test func aClientThatNeverReadsItsAnswersCannotGrowTheAgent() async throws {
        let project = try TemporaryDirectory()
        try project.write("a.txt", String(repeating: "some text\n", count: 2_000))
        let agent = try await startAgent(project)
        let greedy = try RawSocketClient(path: project.url(".autosave/agent.sock"))
        // Each request asks for 20 KB back; none of it is ever read.
        let request = Array(#"{"jsonrpc":"2.0","id":1,"method":"read","params":{"path":"a.txt"}}"#.utf8) + [10]
        var batch: [UInt8] = []
        for _ in 0..<1_000 { batch += request }
        var sent = 0
        for _ in 0..<200 {
            guard let count = greedy.send(batch, waitingAtMost: .seconds(2)) else { break }
            sent += count
        }
        // The agent stopped reading from it long before 200,000 answers (4 GB) piled up.
        #expect(sent < 200 * batch.count)
        #expect(try residentMegabytes(agent) < 400)
        #expect(try await cli(["write", "b.txt"], in: project, stdin: "still served\n").status == 0)
        #expect(try await cli(["cat", "b.txt"], in: project).stdout == "still served")
        withExtendedLifetime(greedy) {}
        agent.signal(SIGTERM)
        #expect(await agent.exitStatus() == 0)
    }

    @Test func aStateDirectoryDeletedWhileRunningIsMadeAgainAndNothingIsLost() async throws {
        let project = try TemporaryDirectory()
        let agent = try await startAgent(project, config: #"{"autosave": {"delayMs": 60000, "maxDelayMs": 60000}}"#)
        #expect(try await cli(["write", "a.txt"], in: project, stdin: "before the loss\n").status == 0)
        // As `rm -rf` does; the agent may make the directory again before the removal is over.
        for _ in 0..<10 {
            do {
                try FileManager.default.removeItem(atPath: project.url(".autosave"))
                break
            } catch {}
        }
        _ = try await agent.stderrLines.first(timeout: .seconds(30), "state-dir-lost") { $0.contains(" state-dir-lost ") }
        try await agent.stderrLines.wait(timeout: .seconds(30), "listening again") { lines in
            lines.filter { $0.contains(" listening ") }.count >= 2
        }
        #expect(try await cli(["write", "b.txt"], in: project, stdin: "after the loss\n").status == 0)
        #expect(try await cli(["sync"], in: project).status == 0, "barriers work again")
        let second = try await AgentProcess.run(["run", project.path])
        #expect(second.status == 1, "the lock was taken again")
        agent.signal(SIGKILL)
        _ = await agent.exitStatus()
        let restarted = try AgentProcess(["run", project.path])
        try await restarted.stderrLines.wait(timeout: .seconds(30), "both recovered") { lines in
            lines.contains { $0.contains(" recovered path=a.txt") } && lines.contains { $0.contains(" recovered path=b.txt") }
        }
        restarted.signal(SIGTERM)
        #expect(await restarted.exitStatus() == 0)
        #expect(try project.read("a.txt") == "before the loss\n")
        #expect(try project.read("b.txt") == "after the loss\n")
    }
}

/// A bare Unix-socket client that can misbehave: flood, never read, idle.
final class RawSocketClient {
    let descriptor: CInt

    init(path: String) throws {
        descriptor = socket(AF_UNIX, CInt(SOCK_STREAM.rawValue) | CInt(SOCK_CLOEXEC.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            let bytes = Array(path.utf8.prefix(raw.count - 1))
            raw.copyBytes(from: bytes)
        }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard connected == 0 else {
            close(descriptor)
            throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
        }
    }

    deinit { close(descriptor) }

    /// Sends `bytes`; nil once the agent closed the connection or (with a wait) stopped reading.
    func send(_ bytes: [UInt8], waitingAtMost wait: Duration? = nil) -> Int? {
        if let wait {
            var ready = pollfd(fd: descriptor, events: Int16(POLLOUT), revents: 0)
            let milliseconds = CInt(wait.components.seconds * 1000)
            guard poll(&ready, 1, milliseconds) == 1, ready.revents & Int16(POLLOUT) != 0 else { return nil }
            let sent = bytes.withUnsafeBytes { Glibc.send(descriptor, $0.baseAddress, $0.count, CInt(MSG_NOSIGNAL | MSG_DONTWAIT)) }
            return sent > 0 ? sent : (errno == EAGAIN ? 0 : nil)
        }
        let sent = bytes.withUnsafeBytes { Glibc.send(descriptor, $0.baseAddress, $0.count, CInt(MSG_NOSIGNAL)) }
        return sent > 0 ? sent : nil
    }
}
