import AutosaveTestKit
import Foundation
import Testing

/// The agent under a tight descriptor limit (`ulimit -n 64`, for the agent alone): clients cannot
/// take what it needs, it costs nothing while they wait, and it saves and stops as usual.
@Suite struct DescriptorLimitTests {
    /// `autosave run` in a shell that lowers the limit first, so only the agent has it.
    static func startAgent(on project: TemporaryDirectory, descriptors: Int = 64, config: String? = nil) async throws -> AgentProcess {
        if let config { try project.write("autosave.json", config) }
        let agent = try AgentProcess(
            ["-c", #"ulimit -n "$0" && exec "$1" run "$2""#, "\(descriptors)", AgentProcess.binary, project.path], executable: "/bin/sh")
        _ = try await agent.stderrLines.first(timeout: .seconds(30), "ready") { $0.contains(" ready ") }
        return agent
    }

    /// Clock ticks (user + system) the process has used, from `/proc/PID/stat`.
    static func cpuTicks(of pid: Int32) throws -> Int {
        let stat = try String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)
        // Fields after the command's closing parenthesis: state is the 3rd field, utime the 14th.
        let fields = stat[stat.range(of: ")", options: .backwards)!.upperBound...].split(separator: " ")
        return Int(fields[11])! + Int(fields[12])!
    }

    static let status = #"{"jsonrpc":"2.0","id":1,"method":"status"}"#

    /// 120 idle clients under `ulimit -n 64` spun the agent at 100 % CPU: SwiftNIO's accept
    /// failed with EMFILE and woke again at once for the clients still waiting (and now and then
    /// libdispatch trapped, SIGILL, failing to open /proc for its thread monitor).
    @Test func idleClientsBeyondTheLimitCostNoCPUAndAreToldWhy() async throws {
        let project = try TemporaryDirectory()
        let agent = try await Self.startAgent(on: project)
        let clients = try RawClients(socket: project.url(".autosave/agent.sock"), count: 120)
        clients.send([Self.status])
        let answers = await clients.lines(timeout: .seconds(10))
        // The measure the issue asks for: the agent's CPU over 3 s while the clients wait.
        let before = try Self.cpuTicks(of: agent.processIdentifier)
        try await Task.sleep(for: .seconds(3))
        let ticks = try Self.cpuTicks(of: agent.processIdentifier) - before
        #expect(ticks <= 15, "the agent used \(ticks) ticks of CPU in 3 s with idle clients")

        let served = answers.filter { $0.first?.contains(#""result""#) == true }.count
        let refused = answers.filter { $0.first?.contains("outOfDescriptors") == true }
        #expect(served >= 1 && served + refused.count == 120, "served \(served), refused \(refused.count), of 120")
        #expect(refused.first?.first?.contains("file descriptors") == true, "\(refused.first ?? [])")
        #expect(agent.stderrLines.elements.filter { $0.contains(" descriptors-exhausted ") }.count == 1)

        // Descriptors come back: a client is served, and the spell's end is logged (at the first
        // client served a second after the last refusal; one refused meanwhile pushes it back).
        clients.close()
        var recovered = false
        for _ in 0..<30 where !recovered {
            _ = try await AgentProcess.client(["status"], in: project)
            recovered = (try? await agent.stderrLines.first(timeout: .seconds(2), "descriptors-recovered") { $0.contains(" descriptors-recovered ") }) != nil
        }
        #expect(recovered)
        #expect(try await AgentProcess.client(["status"], in: project).status == 0)
        agent.signal(SIGTERM)
        #expect(await agent.exitStatus() == 0)
    }

    /// With clients holding every descriptor, a file created and a client come: the agent trapped
    /// (SIGILL) now and then, and SIGTERM never ended it (the watcher's stop waits for a cookie
    /// file it could not create). Now clients hold only their share: it sees the files, tells the
    /// client why it is not served, and stops with every edit saved while they still wait.
    @Test func filesAndClientsWhileClientsHoldTheirShareLeaveTheAgentWhole() async throws {
        let project = try TemporaryDirectory()
        // Watched from the start, so that each file made in it is a change of its own.
        try project.makeDirectory("new")
        let agent = try await Self.startAgent(on: project, config: #"{"autosave": {"delayMs": 60000, "maxDelayMs": 60000}}"#)
        #expect(try await AgentProcess.client(["write", "kept.txt"], in: project, stdin: "unsaved\n").status == 0)
        let clients = try RawClients(socket: project.url(".autosave/agent.sock"), count: 120)
        clients.send([Self.status])
        _ = await clients.lines(timeout: .seconds(10))
        for index in 0..<20 {
            try project.write("new/file\(index).txt", "\(index)\n")
        }
        _ = try await agent.stderrLines.wait(timeout: .seconds(30), "20 external changes") { lines in
            lines.filter { $0.contains(" external-change ") && $0.contains("path=new/file") }.count == 20
        }
        let turnedAway = try await AgentProcess.client(["cat", "kept.txt"], in: project)
        #expect(turnedAway.status == 1 && turnedAway.stderr.contains("file descriptors"), "\(turnedAway.stderr)")
        agent.signal(SIGTERM)
        #expect(await agent.exitStatus(timeout: .seconds(30)) == 0)
        #expect(agent.stderrLines.elements.contains { $0.contains(" shutdown ") && $0.contains("saved=1") && $0.contains("failed=0") })
        #expect(try project.read("kept.txt") == "unsaved\n")
        clients.close()
    }

    /// The final flush ran 64 saves at once; under `ulimit -n 64` some failed with EMFILE and
    /// their edits went to conflict copies (logged as if their folders were gone).
    @Test func aFlushUnderATightLimitSavesEveryBufferAtItsPath() async throws {
        let project = try TemporaryDirectory()
        let agent = try await Self.startAgent(on: project, config: #"{"autosave": {"delayMs": 600000, "maxDelayMs": 600000}}"#)
        let client = try RawClients(socket: project.url(".autosave/agent.sock"), count: 1)
        let writes = (0..<300).map { index in
            #"{"jsonrpc":"2.0","id":\#(index),"method":"write","params":{"path":"d\#(index % 50)/f\#(index).txt","content":"edit \#(index)\n","createParents":true}}"#
        }
        client.send(writes)
        let answers = await client.lines(count: 300, timeout: .seconds(60))[0]
        #expect(answers.count == 300 && answers.allSatisfy { $0.contains(#""result""#) }, "\(answers.filter { !$0.contains(#""result""#) }.prefix(3))")
        client.close()
        agent.signal(SIGTERM)
        #expect(await agent.exitStatus(timeout: .seconds(60)) == 0)
        let lines = agent.stderrLines.elements
        #expect(lines.contains { $0.contains(" shutdown ") && $0.contains("saved=300") && $0.contains("failed=0") }, "\(lines.suffix(3))")
        #expect(!lines.contains { $0.contains(" save-failed ") || $0.contains(" conflict ") }, "\(lines.filter { $0.contains("fail") }.prefix(3))")
        for index in 0..<300 {
            #expect(try project.read("d\(index % 50)/f\(index).txt") == "edit \(index)\n")
        }
    }
}
