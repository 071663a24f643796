import ArgumentParser
import AutosaveKit

/// `autosave config`: the effective configuration, every key, as JSON.
struct ConfigCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "config",
        abstract: "Print the effective configuration for DIR as JSON (exit 2 when it is invalid)."
    )

    @OptionGroup var target: ConfigurationOptions

    func run() throws {
        let resolved = try target.load()
        print(resolved.effectiveJSON)
    }
}
