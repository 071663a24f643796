import AutosaveTestKit
import Foundation
import Testing

/// `autosave show` writes a version's bytes to standard output as they come off the socket, over
/// a plain blocking connection: byte for byte whatever they hold, quietly cut short by a reader
/// that goes away, and an answer the agent cut short is an error, not a shorter version.
@Suite struct ShowStreamingTests {
    @Test func aLargeVersionComesOutByteForByteAndAReaderThatGoesAwayEndsShowQuietly() async throws {
        let project = try TemporaryDirectory()
        // Just under history's 1 MiB cap, with NULs and bytes that are not UTF-8 (a binary, so
        // history's cap for binaries is raised to it).
        var random = SplitMix64(seed: 71)
        let bytes = (0..<1_000_000).map { _ in UInt8(truncatingIfNeeded: random.next()) }
        try TemporaryDirectory.writeFile(project.url("big.bin"), bytes)
        let agent = try await AgentProcess.started(on: project, config: #"{"history": {"maxBinaryBytes": 1048576}}"#)
        _ = try await agent.stderrLines.first(timeout: .seconds(30), "history-baseline state=done") {
            $0.contains("history-baseline") && $0.contains("state=done")
        }

        let compared = try await AgentProcess.run(
            ["-c", "set -o pipefail; '\(AgentProcess.binary)' show big.bin@-0 | cmp - big.bin"], executable: "/bin/bash",
            in: project.path)
        #expect(compared.status == 0, "show | cmp: \(compared.stdout) \(compared.stderr)")
        let head = try await AgentProcess.run(
            ["-c", "set -o pipefail; '\(AgentProcess.binary)' show big.bin@-0 | head -c 5 | od -An -tx1"],
            executable: "/bin/bash", in: project.path)
        #expect(head.status == 0, "show | head: \(head.stderr)")
        #expect(head.stdout.split(separator: " ").map(String.init) == bytes.prefix(5).map { String(format: "%02x", $0) })
        agent.signal(SIGTERM)
        #expect(await agent.exitStatus() == 0)
    }

    @Test func anAnswerCutShortInsideItsBytesFailsTheShow() async throws {
        let project = try TemporaryDirectory()
        let socket = project.url("fake.sock")
        // An agent that announces 100 bytes after its answer, sends 10, and hangs up.
        let server = try AgentProcess(
            [
                "-c",
                """
                import socket, sys
                server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                server.bind(sys.argv[1]); server.listen(1); print("listening", flush=True)
                connection, _ = server.accept()
                connection.recv(65536)
                version = '{"version":"7","path":"a.txt","time":"2026-01-01T00:00:00.000Z","who":"cli","kind":"saved","size":100}'
                connection.sendall(('{"jsonrpc":"2.0","id":1,"result":{"version":' + version + ',"exists":true,"contentBytes":100}}\\n').encode() + b"0123456789")
                connection.close()
                """,
                socket,
            ], executable: "/usr/bin/python3")
        _ = try await server.stdoutLines.first(timeout: .seconds(30), "the fake agent listening") { $0 == "listening" }
        let shown = try await AgentProcess.run(["show", "a.txt@7", "--socket", socket], in: project.path)
        #expect(shown.status == 1, "\(shown.stderr)")
        #expect(shown.stderr.contains("the agent closed the connection 10 bytes into the 100 of its answer"), "\(shown.stderr)")
        #expect(shown.stdout == "0123456789", "what came was written as it came")
        #expect(await server.exitStatus() == 0)
    }
}
