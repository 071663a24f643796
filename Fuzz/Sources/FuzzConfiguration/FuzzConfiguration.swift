// libFuzzer target: the configuration file parser, as `autosave run --config FILE` and
// `autosave config` use it (`Configuration.decode`: JSONReader, then the schema).
// Build and run with `Fuzz/run [SECONDS]`; seeds are in Fuzz/Seeds/FuzzConfiguration/.
//
// Beyond "no crash, no hang": every rejection renders the message the CLI prints, and every
// accepted configuration survives the round trip through the JSON that `autosave config` prints.
import AutosaveKit

/// One fuzz input: a configuration file's bytes.
func fuzzConfiguration(_ input: UnsafeBufferPointer<UInt8>) -> CInt {
    let bytes = Array(input)
    let configuration: Configuration
    do {
        configuration = try Configuration.decode(bytes, file: "fuzz.json")
    } catch {
        let message = error.description
        guard message.hasPrefix("fuzz.json:"), message.hasSuffix("the agent was not started")
            || message.hasSuffix("prints the defaults)")
        else { fatalError("FuzzConfiguration: an error message that does not name the file or the outcome: \(message)") }
        return 0
    }
    let printed = configuration.jsonValue.prettyText()
    do {
        let reread = try Configuration.decode(Array(printed.utf8), file: "printed.json")
        guard reread == configuration else {
            fatalError("FuzzConfiguration: `autosave config` output reads back as a different configuration:\n\(printed)")
        }
    } catch {
        fatalError("FuzzConfiguration: `autosave config` output is rejected: \(error)\n\(printed)")
    }
    return 0
}
