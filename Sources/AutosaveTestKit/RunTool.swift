import Foundation
import Testing

/// Runs a real tool (`sed`, `touch`, …) to completion, as a user would, and expects it to succeed.
public func runTool(_ executable: String, _ arguments: [String]) throws {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    try process.run()
    process.waitUntilExit()
    #expect(process.terminationStatus == 0, "\(executable) \(arguments) failed")
}
