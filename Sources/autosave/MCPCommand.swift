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
            the CLI join it) until standard input ends; then every unsaved edit is saved and it exits 0. When the \
            agent it joined stops, the next tool call joins the next one, or starts it here. \
            Standard output carries the protocol only; the log goes to standard error.
            """
    )

    @OptionGroup var target: ConfigurationOptions

    static let version = "0.1.0"

    func run() async throws {
        let resolved = try target.load()
        let logger = RunCommand.logger(for: resolved)
        let host = InProcessAgent(resolved, logger: logger)
        let agents = ProjectAgents(
            root: resolved.root, clock: ContinuousClock(), logger: logger, find: { await Self.runningAgent(for: resolved) },
            start: { try await host.start() })
        let socket: String
        do {
            socket = try await agents.agent(replacing: nil)
        } catch {
            let cause = if case AgentUnavailable.cannotStart(_, _, let cause) = error { cause } else { error }
            logger.error("start-failed", metadata: ["root": "\(resolved.root)", "error": "\(cause)", "next": "exiting"])
            throw cause is StateDirectory.LinkFound ? ExitStatus.usage : ExitStatus.failure
        }
        /// Which of the two finished first: the server (its input ended) or the agent run here
        /// (stopped by a signal or a client's `stop`, or failed).
        enum Finished: Sendable {
            case server
            case agent((any Error)?)
        }
        let finished = await withTaskGroup(of: Finished?.self) { tasks in
            tasks.addTask {
                await CodingAgentServer.serve(socketPath: socket, agents: agents, version: Self.version, logger: logger)
                return .server
            }
            tasks.addTask {
                for await error in host.endings { return .agent(error) }
                return nil
            }
            let first = await tasks.next() ?? nil
            // The agent stopped first: the server stops reading. Or the server did: no more waiting on the agent.
            tasks.cancelAll()
            return first
        }
        // Input ended: the agent run here, if any, stops, saving every unsaved edit first.
        let stopped = await host.stop()
        let failure: (any Error)? = if case .agent(let error)? = finished { error } else { stopped }
        if let failure, !(failure is CancellationError) {
            logger.error("start-failed", metadata: ["root": "\(resolved.root)", "error": "\(failure)", "next": "exiting"])
            throw failure is StateDirectory.LinkFound ? ExitStatus.usage : ExitStatus.failure
        }
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
            if let client = try? await ControlClient(socketPath: socket), (try? await client.call(StatusMethod())) != nil { return socket }
        }
        return nil
    }
}
