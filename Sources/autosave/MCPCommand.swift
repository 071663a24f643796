import ArgumentParser
import AutosaveControl
import AutosaveKit
import AutosaveMCP
import FoundationEssentials
import Logging
import ServiceLifecycle

/// `autosave mcp`: a Model Context Protocol server on standard input and output, so that coding
/// agents edit through the buffers and never over a person's unsaved work.
struct MCPCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "mcp",
        abstract: "Serve coding agents over MCP (stdio): their edits go through the buffers, merged with everyone's.",
        discussion: """
            Joins the agent running for DIR, or runs one in this process (same lock and socket, so editors and \
            the CLI join it) until standard input ends; then every unsaved edit is saved and it exits 0. \
            Standard output carries the protocol only; the log goes to standard error.
            """
    )

    @OptionGroup var target: ConfigurationOptions

    static let version = "0.1.0"

    func run() async throws {
        let resolved = try target.load()
        let logger = RunCommand.logger(for: resolved)
        if let socket = await Self.runningAgent(for: resolved) {
            logger.info("mcp-joined", metadata: ["socket": "\(socket)"])
            await CodingAgentServer.serve(socketPath: socket, version: Self.version, logger: logger)
            return
        }
        try await serveWithOwnAgent(resolved, logger: logger)
    }

    /// The socket of an agent that answers for the configuration's root (its own state directory,
    /// else one found walking up, as the CLI finds it).
    static func runningAgent(for resolved: ResolvedConfiguration) async -> String? {
        let candidates = [
            SocketLocation.find(stateDirectory: resolved.stateDirectory, root: resolved.root), ClientOptions.discover(from: resolved.root),
        ]
        for case .socket(let socket, _)? in candidates {
            // Another user's socket is refused here before anything is sent; an agent is then run
            // in this process, which fails naming the user when the state directory is theirs.
            // Asked, not only connected to: a connection must be used to be closed cleanly.
            if let client = try? await ControlClient(socketPath: socket), (try? await client.call(.status)) != nil { return socket }
        }
        return nil
    }

    /// Runs an agent here, serves MCP once it listens, and stops it (saving everything) when
    /// standard input ends or a signal stops it first.
    private func serveWithOwnAgent(_ resolved: ResolvedConfiguration, logger: Logger) async throws {
        let (listening, listened) = AsyncStream.makeStream(of: String.self)
        let (group, shutdown) = RunCommand.agentGroup(resolved, logger: logger) { path in
            listened.yield(path)
            listened.finish()
        }
        /// Which of the two finished: the agent (stopped by a signal, or failed) or the server (its input ended).
        enum Finished: Sendable {
            case agent((any Error)?)
            case server
        }
        let failure = await withTaskGroup(of: Finished.self) { tasks in
            tasks.addTask {
                defer { listened.finish() }
                do {
                    try await group.run()
                    return .agent(nil)
                } catch {
                    return .agent(error)
                }
            }
            tasks.addTask {
                var socket: String?
                for await path in listening { socket = path }
                guard let socket else { return .server }
                logger.info("mcp-serving", metadata: ["socket": "\(socket)", "agent": "in-process"])
                await CodingAgentServer.serve(socketPath: socket, version: Self.version, logger: logger)
                // Input ended: the agent stops, saving every unsaved edit first.
                shutdown.trigger()
                return .server
            }
            var failure: (any Error)?
            for await finished in tasks {
                guard case .agent(let error) = finished else { continue }
                failure = error
                // The agent stopped first (a signal): the server stops reading.
                tasks.cancelAll()
            }
            return failure
        }
        if let error = failure {
            if !(error is CancellationError) {
                logger.error("start-failed", metadata: ["root": "\(resolved.root)", "error": "\(error)", "next": "exiting"])
            }
            throw error is StateDirectory.LinkFound ? ExitStatus.usage : ExitStatus.failure
        }
    }
}
