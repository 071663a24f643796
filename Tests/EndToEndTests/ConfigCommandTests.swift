import AutosaveTestKit
import Foundation
import Testing

/// Bad configuration never starts the agent: exit 2 and a message naming the place and the fix.
@Suite struct ConfigCommandTests {
    func configure(_ text: String) throws -> TemporaryDirectory {
        let project = try TemporaryDirectory()
        try project.write("autosave.json", text)
        return project
    }

    @Test func theEffectiveConfigurationIsPrinted() async throws {
        let project = try configure(#"{"autosave": {"delayMs": 250}}"#)
        let result = try await AgentProcess.run(["config", project.path])
        #expect(result.status == 0)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        #expect(object["root"] as? String == project.path)
        #expect((object["autosave"] as? [String: Any])?["delayMs"] as? Int == 250)
        #expect((object["autosave"] as? [String: Any])?["maxDelayMs"] as? Int == 10_000)
        #expect((object["watch"] as? [String: Any])?["settleMs"] as? Int == 50)
        #expect(object.keys.count == 10, "root, stateDir and eight sections, history among them")
    }

    @Test(arguments: [
        (
            "{\n  \"autosave\": {\n    \"delayMs\": 10,\n  }\n}",
            "autosave.json:4:3: invalid JSON at line 4, column 3: trailing comma before `}`; the agent was not started"
        ),
        (
            "{\n  \"autosave\": { \"delay\": 10 }\n}",
            "autosave.json:2:17: `autosave.delay`: unknown key — did you mean `autosave.delayMs`?"
        ),
        (
            "{\"watch\": {\"settleMs\": \"fast\"}}",
            "autosave.json:1:12: `watch.settleMs`: expected a whole number from 0 to 60000, got a string"
        ),
        (
            "{\"autosave\": {\"delayMs\": 99999999}}",
            "autosave.json:1:15: `autosave.delayMs`: 99999999 is out of range: expected a whole number from 0 to 3600000"
        ),
        (
            "{\"log\": {\"format\": \"yaml\"}}",
            "autosave.json:1:10: `log.format`: expected one of \"text\", \"json\", got \"yaml\""
        ),
    ])
    func badConfigurationIsRefusedWithExitCode2(text: String, expected: String) async throws {
        let project = try configure(text)
        for command in [["config", project.path], ["run", project.path]] {
            let result = try await AgentProcess.run(command)
            #expect(result.status == 2, "\(command[0])")
            #expect(result.stderr.hasPrefix("autosave: error: \(project.path)/"), "\(command[0]): \(result.stderr)")
            #expect(result.stderr.contains(expected), "\(command[0]): \(result.stderr)")
            #expect(!result.stderr.contains(" ready "))
        }
    }

    @Test func anExplicitConfigFileThatIsMissingIsNamed() async throws {
        let project = try TemporaryDirectory()
        let result = try await AgentProcess.run(["run", project.path, "--config", project.url("nope.json")])
        #expect(result.status == 2)
        #expect(result.stderr == "autosave: error: cannot read configuration \(project.url("nope.json")): No such file or directory; the agent was not started")
    }

    @Test func aBadOptionIsAUsageError() async throws {
        let result = try await AgentProcess.run(["run", "--log-format", "xml"])
        #expect(result.status == 2)
        #expect(result.stderr.contains("xml"))
    }
}
