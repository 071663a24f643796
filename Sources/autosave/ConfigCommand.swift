import ArgumentParser
import AutosaveKit

/// `autosave config`: the effective configuration, every key, as JSON.
struct ConfigCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "config",
        abstract: "Print the effective configuration for DIR as JSON (exit 2 when it is invalid)."
    )

    @Argument(help: "The folder whose configuration to show (default: the current directory).")
    var directory: String?

    @Option(name: .long, help: "Configuration file (default: DIR/autosave.json when it exists, else built-in defaults).")
    var config: String?

    func run() throws {
        let resolved = try loadConfiguration(directory: directory, configFile: config)
        print(resolved.effectiveJSON)
    }
}
