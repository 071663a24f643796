import ArgumentParser
import AutosaveControl
import AutosaveKit
import Logging
import ServiceLifecycle
import UnixSignals

/// `autosave run`: the agent in the foreground, logging to standard error.
struct RunCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Watch DIR recursively and keep its files safe; logs every external change.",
        discussion: """
            Logs `ready` once clients can connect (under systemd, with NOTIFY_SOCKET set, it sends READY=1 then). \
            SIGINT, SIGTERM or SIGHUP stop it cleanly (exit 0), every unsaved edit saved first; a stop \
            that takes longer than limits.stopTimeoutMs (a call stuck on a hung mount) ends it with status 1, \
            the edits not saved yet left in the journal for the next start.
            """
    )

    @OptionGroup var target: ConfigurationOptions

    @Option(name: .long, help: "Log format: text or json (overrides log.format).")
    var logFormat: LogFormat?

    @Option(name: .long, help: "Least severe level logged: trace, debug, info, notice, warning or error (overrides log.level).")
    var logLevel: LogLevel?

    func run() async throws {
        var resolved = try target.load()
        if let logFormat { resolved.configuration.log.format = logFormat }
        if let logLevel { resolved.configuration.log.level = logLevel }
        let logger = Self.logger(for: resolved)
        let (group, _) = Self.agentGroup(resolved, logger: logger)
        do {
            try await group.run()
        } catch is RootRemoved {
            throw ExitStatus.failure
        } catch is EditsNotOnDisk {
            // Each is logged (`lost-to-disk`) with its journal record.
            throw ExitStatus.failure
        } catch let error as StateDirectory.LinkFound {
            // Nothing ran: like a bad configuration, the user must fix the folder first.
            logger.error("start-failed", metadata: ["root": "\(resolved.root)", "error": "\(error)", "next": "exiting"])
            throw ExitStatus.usage
        } catch {
            logger.error("start-failed", metadata: ["root": "\(resolved.root)", "error": "\(error)", "next": "exiting"])
            throw ExitStatus.failure
        }
    }
}

extension RunCommand {
    /// The agent's logger: to standard error, in the configured format and level.
    static func logger(for resolved: ResolvedConfiguration) -> Logger {
        let log = resolved.configuration.log
        return Logger(label: "autosave") { _ in AgentLogHandler(level: log.level, format: log.format) }
    }

    /// The agent and its control server as a service group that SIGTERM, SIGINT and SIGHUP stop
    /// gracefully (as a client's `stop` does), within `limits.stopTimeoutMs` whatever a blocking call is
    /// doing (`StopDeadline`); `listening` hears the socket's path once clients can connect.
    static func agentGroup(
        _ resolved: ResolvedConfiguration, logger: Logger, listening: @escaping @Sendable (String) -> Void = { _ in }
    ) -> (ServiceGroup, ShutdownTrigger) {
        let shutdown = ShutdownTrigger()
        let maxRequestBytes = resolved.configuration.limits.maxRequestBytes
        let signals: [UnixSignal] = [.sigterm, .sigint, .sighup]
        let deadline = StopDeadline(
            timeout: .milliseconds(resolved.configuration.limits.stopTimeoutMs), isJournaled: resolved.configuration.journal.enabled,
            logger: logger)
        deadline.arm(on: signals.map(\.rawValue))
        let agent = Agent(configuration: resolved, logger: logger, notifier: .fromEnvironment(), stopDeadline: deadline) {
            workspace, onListening in
            // Worked out each time: the state directory may have been made again, or moved with
            // the root, since.
            let location = try SocketLocation.make(stateDirectory: workspace.stateDirectory, root: workspace.root, logger: logger)
            defer { location.release() }
            let server = ControlServer(
                socketPath: location.path, workspace: workspace, maxRequestBytes: maxRequestBytes, logger: logger,
                requestShutdown: { shutdown.trigger() })
            try await server.run(listening: { path in
                onListening(path)
                listening(path)
            })
        }
        let group = ServiceGroup(
            configuration: .init(
                services: [
                    .init(service: agent),
                    // Last, so a signal's graceful shutdown ends it first; ending on its own, it shuts the group down.
                    .init(service: shutdown, successTerminationBehavior: .gracefullyShutdownGroup),
                ],
                gracefulShutdownSignals: signals,
                logger: Logger(label: "autosave.lifecycle") { _ in SwiftLogNoOpLogHandler() }))
        return (group, shutdown)
    }
}

/// Lets a client's `stop` shut the agent's service group down gracefully, as a signal does: a
/// service of that group that returns at the first `trigger()`, and the group then shuts down.
final class ShutdownTrigger: Service {
    private let requests: AsyncStream<Void>
    private let requested: AsyncStream<Void>.Continuation

    init() {
        (requests, requested) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    }

    /// Asks for a graceful shutdown; nothing more happens once one has begun.
    func trigger() {
        requested.yield()
    }

    /// Returns at the first trigger, or when the group shuts down (or is cancelled) for another reason.
    func run() async {
        await withGracefulShutdownHandler {
            for await _ in requests { return }
        } onGracefulShutdown: { [requested] in
            requested.finish()
        }
    }
}
