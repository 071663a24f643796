import AutosaveKit
import AutosaveTestKit
import Foundation
import SystemPackage
import Testing

private func decode(_ text: String) throws(ConfigurationError) -> Configuration {
    try Configuration.decode(Array(text.utf8), file: "autosave.json")
}

private func problems(_ text: String) -> [ConfigurationError.Problem] {
    do {
        _ = try decode(text)
    } catch .invalid(_, let problems) {
        return problems
    } catch {
        Issue.record("expected an invalid configuration, got \(error)")
    }
    return []
}

/// The package's root, for the checked-in examples and README.
let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().path

@Suite struct ConfigurationTests {
    @Test func emptyObjectGivesEveryDefault() throws {
        let configuration = try decode("{}")
        #expect(configuration == Configuration())
        #expect(configuration.autosave.delayMs == 1000)
        #expect(configuration.autosave.maxDelayMs == 10_000)
        #expect(configuration.watch.settleMs == 50)
        #expect(configuration.stateDir == ".autosave")
        #expect(configuration.limits.maxFileBytes == 64 << 20)
        #expect(configuration.conflicts.keep == .disk)
        #expect(configuration.write.hardLinks == .preserve)
    }

    @Test func theExampleFileIsExactlyTheDefaults() throws {
        let bytes = try FileContents.read(packageRoot + "/examples/autosave.json")
        #expect(try Configuration.decode(bytes, file: "examples/autosave.json") == Configuration())
    }

    /// Every key is in the example file (docs/configuration.md is checked by DocumentationTests).
    @Test func everyKeyIsInTheExample() throws {
        let example = try String(contentsOfFile: packageRoot + "/examples/autosave.json", encoding: .utf8)
        for field in ConfigurationSchema.fields {
            let leaf = field.path.split(separator: ".").last!
            #expect(example.contains("\"\(leaf)\""), "examples/autosave.json lacks \(field.path)")
        }
    }

    @Test func valuesAreRead() throws {
        let configuration = try decode(
            """
            {"autosave": {"delayMs": 200, "maxDelayMs": 500}, "watch": {"ignore": ["build/", "*.o"]},
             "conflicts": {"keep": "buffer"}, "log": {"format": "json", "level": "debug"}, "root": "src"}
            """)
        #expect(configuration.autosave.delayMs == 200)
        #expect(configuration.watch.ignore == ["build/", "*.o"])
        #expect(configuration.conflicts.keep == .buffer)
        #expect(configuration.log.format == .json)
        #expect(configuration.log.level == .debug)
        #expect(configuration.root == "src")
    }

    @Test func aSyntaxErrorNamesLineAndColumn() {
        let text = "{\n  \"autosave\": {\n    \"delayMs\": 10,\n  }\n}"
        #expect {
            try decode(text)
        } throws: { error in
            guard case .syntax(_, let syntax) = error as? ConfigurationError else { return false }
            return syntax.position == SourcePosition(line: 4, column: 3) && syntax.message == "trailing comma before `}`"
        }
        var message = ""
        do { _ = try decode(text) } catch { message = error.description }
        #expect(message.contains("autosave.json:4:3: invalid JSON at line 4, column 3: trailing comma before `}`"))
    }

    @Test func unterminatedDocumentsAndBadTokensAreSyntaxErrors() {
        for (text, expected) in [
            ("{\"a\": tru}", "expected a value, found `t`"),
            ("{\"a\" 1}", "expected `:` after key `a`, found `1`"),
            ("{\"a\": 1", "expected `,` or `}`, found end of file"),
            ("{\"a\": \"x\n\"}", "unterminated string (a newline inside quotes)"),
            ("{\"a\": 01}", "numbers cannot have leading zeros"),
            ("{} {}", "unexpected `{` after the end of the document"),
        ] {
            do {
                _ = try decode(text)
                Issue.record("\(text) was accepted")
            } catch .syntax(_, let error) {
                #expect(error.message == expected, "\(text)")
            } catch {
                Issue.record("\(text): \(error)")
            }
        }
    }

    @Test func anUnknownKeyNamesItsPathAndTheNearestValidKey() {
        let found = problems("{\"autosave\": {\"delay\": 5}}")
        #expect(found.map(\.key) == ["autosave.delay"])
        #expect(found.first?.message == "unknown key — did you mean `autosave.delayMs`?")
        #expect(found.first?.position == SourcePosition(line: 1, column: 15))
        #expect(problems("{\"wacth\": {}}").first?.message == "unknown key — did you mean `watch`?")
        #expect(problems("{\"watch\": {\"settlems\": 5}}").first?.message == "unknown key — did you mean `watch.settleMs`?")
        let far = problems("{\"journal\": {\"compression\": true}}").first?.message ?? ""
        #expect(far == "unknown key; valid keys here: `journal.enabled`, `journal.fsync`")
    }

    @Test func aWrongTypeNamesTheKeyWhatWasGivenAndWhatIsAllowed() {
        #expect(
            problems("{\"watch\": {\"settleMs\": \"fast\"}}").map(\.description) == [
                "1:12: `watch.settleMs`: expected a whole number from 0 to 60000, got a string"
            ])
        #expect(
            problems("{\"write\": {\"fsync\": 1}}").map(\.message) == ["expected true or false, got 1"])
        #expect(
            problems("{\"autosave\": {\"delayMs\": 1.5}}").map(\.message) == [
                "expected a whole number from 0 to 3600000, got 1.5"
            ])
        #expect(problems("{\"watch\": 5}").map(\.message) == ["expected an object, got a number"])
        #expect(problems("[1]").map(\.message) == ["expected a JSON object, got an array"])
        #expect(
            problems("{\"watch\": {\"ignore\": [\"a\", 3]}}").map(\.message) == ["item 1 must be a string, got 3"])
    }

    @Test func anOutOfRangeValueNamesTheRange() {
        #expect(
            problems("{\"autosave\": {\"delayMs\": -1}}").map(\.message) == [
                "-1 is out of range: expected a whole number from 0 to 3600000"
            ])
        #expect(
            problems("{\"conflicts\": {\"keep\": \"mine\"}}").map(\.message) == [
                "expected one of \"disk\", \"buffer\", got \"mine\""
            ])
        #expect(
            problems("{\"autosave\": {\"delayMs\": 2000, \"maxDelayMs\": 500}}").map(\.message) == [
                "500 is less than autosave.delayMs (2000): the longest wait cannot be shorter than the quiet time"
            ])
        #expect(
            problems("{\"watch\": {\"settleMs\": 200, \"maxSettleMs\": 100}}").map(\.message) == [
                "100 is less than watch.settleMs (200): a busy name cannot be reported sooner than a quiet one"
            ])
        #expect(
            problems("{\"watch\": {\"ignore\": [\"[abc\"]}}").map(\.message) == [
                "item 0 (\"[abc\"): unclosed `[` character class"
            ])
        #expect(problems("{\"stateDir\": \"\"}").map(\.message) == ["expected a non-empty string, got \"\""])
    }

    @Test func everyProblemIsReportedAtOnce() {
        let found = problems("{\"autosave\": {\"delay\": 5}, \"log\": {\"level\": \"loud\"}, \"extra\": 1}")
        #expect(found.map(\.key) == ["autosave.delay", "log.level", "extra"])
    }

    @Test func duplicateKeysAreRejected() {
        do {
            _ = try decode("{\"root\": \"a\",\n \"root\": \"b\"}")
            Issue.record("accepted a duplicate key")
        } catch .syntax(_, let error) {
            #expect(error.message == "duplicate key `root`")
            #expect(error.position == SourcePosition(line: 2, column: 2))
        } catch {
            Issue.record("\(error)")
        }
    }

    @Test func theEffectiveConfigurationReadsBackAsItself() throws {
        var configuration = Configuration()
        configuration.watch.ignore = ["build/", "!keep.o"]
        configuration.log.format = .json
        configuration.root = "/srv/x"
        let text = configuration.jsonValue.prettyText()
        #expect(try Configuration.decode(Array(text.utf8), file: "x") == configuration)
    }
}

@Suite struct ConfigurationLoaderTests {
    @Test func directoryArgumentAndItsAutosaveJsonAreUsed() throws {
        let project = try TemporaryDirectory()
        try project.write("autosave.json", "{\"watch\": {\"settleMs\": 7}}")
        let resolved = try ResolvedConfiguration.load(directory: project.path, configFile: nil, currentDirectory: "/")
        #expect(resolved.root == project.path)
        #expect(resolved.file == project.path + "/autosave.json")
        #expect(resolved.configuration.watch.settleMs == 7)
        #expect(resolved.stateDirectory == project.path + "/.autosave")
        #expect(resolved.stateDirectoryInsideRoot == ".autosave")
    }

    @Test func withoutAFileTheBuiltInDefaultsApply() throws {
        let project = try TemporaryDirectory()
        let resolved = try ResolvedConfiguration.load(directory: nil, configFile: nil, currentDirectory: project.path)
        #expect(resolved.file == nil)
        #expect(resolved.root == project.path)
        #expect(resolved.configuration == Configuration())
    }

    @Test func theConfiguredRootIsRelativeToTheFile() throws {
        let project = try TemporaryDirectory()
        try project.makeDirectory("code")
        try project.write("etc/autosave.json", "{\"root\": \"../code\", \"stateDir\": \"var/state\"}")
        let resolved = try ResolvedConfiguration.load(directory: nil, configFile: "etc/autosave.json", currentDirectory: project.path)
        #expect(resolved.root == project.path + "/code")
        #expect(resolved.stateDirectory == project.path + "/code/var/state", "the state dir is relative to the root")
        #expect(resolved.stateDirectoryInsideRoot == "var/state")
    }

    /// `"stateDir": "."` put the lock and the journal among the project's files, and the agent
    /// reported its own socket.
    @Test func aStateDirThatIsNotAFolderInsideTheRootIsRefused() throws {
        let project = try TemporaryDirectory()
        for value in [".", "..", "/tmp", "../elsewhere", "sub/../."] {
            try project.write("autosave.json", "{\"stateDir\": \"\(value)\"}")
            do {
                _ = try ResolvedConfiguration.load(directory: project.path, configFile: nil)
                Issue.record("stateDir \(value) was accepted")
            } catch {
                guard case .invalid(_, let problems) = error else {
                    Issue.record("stateDir \(value): \(error)")
                    continue
                }
                #expect(problems.map(\.key) == ["stateDir"])
                #expect(problems.first?.message.contains("not a folder strictly inside the root") == true)
            }
        }
        try project.write("autosave.json", "{\"stateDir\": \"var/agent\"}")
        #expect(try ResolvedConfiguration.load(directory: project.path, configFile: nil).stateDirectory == project.path + "/var/agent")
    }

    @Test func aMissingRootOrFileIsAClearError() throws {
        let project = try TemporaryDirectory()
        #expect(throws: ConfigurationError.rootUnavailable(path: project.path + "/nope", .noSuchFileOrDirectory)) {
            try ResolvedConfiguration.load(directory: "nope", configFile: nil, currentDirectory: project.path)
        }
        #expect(throws: ConfigurationError.unreadable(file: project.path + "/missing.json", .noSuchFileOrDirectory)) {
            try ResolvedConfiguration.load(directory: nil, configFile: "missing.json", currentDirectory: project.path)
        }
        let error = ConfigurationError.unreadable(file: "/x/missing.json", .noSuchFileOrDirectory)
        #expect(error.description == "cannot read configuration /x/missing.json: No such file or directory; the agent was not started")
    }
}
