import Foundation

/// An agent on a temp project and the CLI that talks to it, as the end-to-end suites use them.
extension AgentProcess {
    /// Writes `config` (when given) as the project's `autosave.json`, starts `autosave run` on the
    /// project, and returns once the agent logs `ready` (clients can connect from then on).
    ///
    /// - Throws: when the binary cannot start, or `AsyncRecorderTimeout` after 30 s without `ready`.
    public static func started(on project: TemporaryDirectory, config: String? = nil) async throws -> AgentProcess {
        if let config { try project.write("autosave.json", config) }
        let agent = try AgentProcess(["run", project.path])
        _ = try await agent.stderrLines.first(timeout: .seconds(30), "ready") { $0.contains(" ready ") }
        return agent
    }

    /// Runs one client command in the project, `stdin` handed over through `--from FILE`.
    public static func client(
        _ arguments: [String], in project: TemporaryDirectory, stdin: String? = nil
    ) async throws -> (status: Int32, stdout: String, stderr: String) {
        guard let stdin else { return try await run(arguments, in: project.path) }
        let input = project.url(".input-\(UUID().uuidString)")
        try Data(stdin.utf8).write(to: URL(fileURLWithPath: input))
        defer { try? FileManager.default.removeItem(atPath: input) }
        return try await run(arguments + ["--from", input], in: project.path)
    }
}
