import AutosaveTestKit
import Foundation
import Testing

/// `autosave history --forget PATH` as a user runs it after writing a secret by mistake: the
/// versions go, and so do their bytes, from the database's files themselves.
@Suite struct HistoryForgetTests {
    func client(_ arguments: [String], in project: TemporaryDirectory) async throws -> (status: Int32, stdout: String, stderr: String) {
        try await AgentProcess.client(arguments, in: project)
    }

    /// Whether `needle` occurs in the history database's main file or its WAL.
    static func historyHolds(_ needle: [UInt8], in project: TemporaryDirectory) throws -> Bool {
        for name in ["history.sqlite", "history.sqlite-wal"] {
            guard let data = FileManager.default.contents(atPath: project.url(".autosave/" + name)) else { continue }
            if data.range(of: Data(needle)) != nil { return true }
        }
        return false
    }

    @Test func aForgottenSecretIsGoneFromTheDatabaseFilesAndFromHistory() async throws {
        let project = try TemporaryDirectory()
        try project.write("kept.txt", "nothing secret\n")
        let agent = try await AgentProcess.started(on: project)
        // Random bytes: zstd keeps them as they are, so the token lies in the file verbatim.
        var random = SplitMix64(seed: 0x70_4B_E4)
        let content = (0..<2048).map { _ in UInt8(truncatingIfNeeded: random.next()) }
        let token = Array(content[1000..<1048])
        try Data(content).write(to: URL(fileURLWithPath: project.url("secret.bin")))
        #expect(try await client(["sync"], in: project).status == 0)
        let listed = try await client(["history", "secret.bin"], in: project)
        #expect(listed.status == 0 && listed.stdout.contains("secret.bin"), "\(listed.stdout)\(listed.stderr)")
        #expect(try Self.historyHolds(token, in: project), "history holds the token before: the search can find it")

        let forgot = try await client(["history", "--forget", "secret.bin"], in: project)
        #expect(forgot.status == 0, "\(forgot.stderr)")
        #expect(forgot.stdout.contains("forgot 1 version of secret.bin"), "\(forgot.stdout)")
        #expect(try !Self.historyHolds(token, in: project), "neither history.sqlite nor its WAL holds the token")
        let after = try await client(["history", "secret.bin"], in: project)
        #expect(after.status == 1)
        #expect(after.stderr.contains("history has no version of secret.bin"), "\(after.stderr)")
        #expect(FileManager.default.contents(atPath: project.url("secret.bin")) == Data(content), "the file itself is not touched")

        let line = try await agent.stderrLines.first(timeout: .seconds(10), "history-forgot") { $0.contains("history-forgot") }
        #expect(line.contains("path=secret.bin") && line.contains("versions=1"), "\(line)")
        agent.signal(SIGTERM)
        #expect(await agent.exitStatus() == 0)
    }

    @Test func forgettingRefusesPathsOutsideTheRootAndTheRootItself() async throws {
        let project = try TemporaryDirectory()
        try project.write("a.txt", "a\n")
        let agent = try await AgentProcess.started(on: project)
        let outside = try await client(["history", "--forget", "/etc/passwd"], in: project)
        #expect(outside.status == 1)
        #expect(outside.stderr.contains("/etc/passwd is outside the root"), "\(outside.stderr)")
        let root = try await client(["history", "--forget", "."], in: project)
        #expect(root.status == 1, "\(root.stdout)\(root.stderr)")
        #expect(root.stderr.contains("it is the root"), "the refusal says why: \(root.stderr)")
        let bare = try await client(["history", "--forget"], in: project)
        #expect(bare.status == 2, "--forget without PATH is a usage error")
        agent.signal(SIGTERM)
        #expect(await agent.exitStatus() == 0)
    }
}
