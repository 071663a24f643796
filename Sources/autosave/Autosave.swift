import ArgumentParser
import AutosaveKit
import FoundationEssentials
import Glibc

/// The `autosave` command: the agent (`run`) and the commands that inspect it.
@main
struct Autosave: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "autosave",
        abstract: "Keeps a project folder's files safe while people and tools edit them at the same time.",
        subcommands: [
            RunCommand.self, ConfigCommand.self, WriteCommand.self, CatCommand.self, OpenCommand.self, SaveCommand.self,
            PatchCommand.self, CloseCommand.self, RemoveCommand.self, StatusCommand.self, EventsCommand.self, SyncCommand.self,
            StopCommand.self, HistoryCommand.self, ShowCommand.self, DiffCommand.self, RestoreCommand.self, UndoCommand.self,
            MCPCommand.self, ChangesCommand.self, FsmonitorCommand.self,
        ]
    )

    /// Runs the command line; usage errors exit with 2 (not ArgumentParser's 64), like bad configuration.
    static func main() async {
        // git runs the hook before every `status`: it skips the argument parser's start-up.
        let arguments = CommandLine.arguments.dropFirst()
        if arguments.first == "fsmonitor", arguments.count >= 2, !arguments.contains(where: { $0.hasPrefix("-") && $0 != "--start" }) {
            Glibc.exit(FsmonitorHook.run(arguments: Array(arguments.dropFirst())))
        }
        do {
            var command = try parseAsRoot()
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch {
            if exitCode(for: error) == .validationFailure {
                AgentLogHandler.standardError(fullMessage(for: error))
                Glibc.exit(ExitStatus.usage.rawValue)
            }
            exit(withError: error)
        }
    }
}

extension LogFormat: ExpressibleByArgument {}
extension LogLevel: ExpressibleByArgument {}

/// Exit codes scripts can rely on.
enum ExitStatus {
    /// The command could not run: bad arguments or a bad configuration.
    static let usage = ExitCode(2)
    /// The command ran and failed.
    static let failure = ExitCode(1)
}

/// Prints `autosave: error: …` on standard error.
func printError(_ message: String) {
    AgentLogHandler.standardError("autosave: error: " + message)
}

/// Which folder and which configuration file a command is about (`run`, `config`).
struct ConfigurationOptions: ParsableArguments {
    @Argument(help: "The folder to keep safe (default: the configuration's root, else the current directory).")
    var directory: String?

    @Option(name: .long, help: "Configuration file (default: DIR/autosave.json when it exists, else built-in defaults).")
    var config: String?

    /// Loads the configuration or ends the process with exit code 2 and the reason.
    func load() throws -> ResolvedConfiguration {
        do {
            return try ResolvedConfiguration.load(directory: directory, configFile: config)
        } catch {
            printError(error.description)
            throw ExitStatus.usage
        }
    }
}
