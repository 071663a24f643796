@_spi(Testing) @testable import AutosaveKit
import AutosaveTestKit
import Foundation
import Testing

/// Keystrokes into a large file, a crash at a random point, then anything a tool does to the file
/// while the agent is down: after the restart, the text the last acknowledged edit made is in the
/// file or in a conflict copy, byte for byte.
///
/// The class of bug: recovery that needs something outside the journal which a tool can change
/// while no agent watches. A large clean file's keystrokes are journaled as splices on the version
/// they were made on; that version was a hard link to the file, so anything that wrote the file's
/// own inode (`echo >>`, nano, VS Code, a truncation) changed it, and recovery could only report
/// the keystrokes lost (`journal-corrupt`). The property: whatever happens to the file while the
/// agent is down (appended, rewritten in place, truncated, replaced, removed, nothing), no
/// acknowledged edit is lost.
@Suite struct KeystrokesSurviveOutsideWritesPropertyTests {
    static let path = "big.txt"
    /// Past the size from which the journal pins a clean file's version instead of copying its text.
    static let lines = (0..<30_000).map { Array("line \($0) of a file large enough to be pinned".utf8) }

    /// Fixed scenarios, each outside write a few times over; `AUTOSAVE_PROPERTY_CASES=N` for more.
    @Test func everyAcknowledgedEditIsInTheFileOrACopyWhateverHappensWhileTheAgentIsDown() async throws {
        let cases = ProcessInfo.processInfo.environment["AUTOSAVE_PROPERTY_CASES"].flatMap(Int.init) ?? 18
        for scenario in 0..<cases {
            var random = SplitMix64(seed: 0x6B65_7973 &+ UInt64(scenario))
            let change = OutsideWrite.allCases[scenario % OutsideWrite.allCases.count]
            try await Self.check(scenario: scenario, change: change, &random)
        }
    }

    /// One scenario: edits and saves, a crash, `change`, a restart and a stop (which saves).
    static func check(scenario: Int, change: OutsideWrite, _ random: inout SplitMix64) async throws {
        let project = try TemporaryDirectory()
        let file = project.path + "/" + path
        var lines = Self.lines
        try TemporaryDirectory.writeFile(file, Array(lines.joined(separator: [10])) + [10])
        var steps: [String] = []
        let isDirtyAtCrash: Bool
        do {
            let harness = try await WorkspaceHarness(root: project.path) {
                $0.autosave.delayMs = 3_600_000
                $0.autosave.maxDelayMs = 3_600_000
            }
            _ = try await harness.workspace.open(path)
            for _ in 0..<(1 + random.below(24)) {
                if random.below(8) == 0 {
                    try await harness.workspace.save([path])
                    steps.append("save")
                    continue
                }
                let edit = Self.randomEdit(&random, lines: &lines)
                try await harness.workspace.acceptEdits(path, [edit], encoding: .utf8).waitUntilDurable()
                steps.append("edit \(edit.range.start.line):\(edit.range.start.character)")
            }
            isDirtyAtCrash = try #require(await harness.workspace.status().first { $0.path == path }).isDirty
            await harness.workspace._abandon()
        }
        let acknowledged = Array(lines.joined(separator: [10])) + [10]
        let context = "scenario \(scenario): \(steps), crash, \(change)"
        if !isDirtyAtCrash {
            #expect(try FileContents.read(file) == acknowledged, "\(context): saved before the crash")
        }
        try change.apply(to: file)
        let restarted = try await WorkspaceHarness(root: project.path)
        #expect(restarted.logged("journal-corrupt").isEmpty, "\(context): \(restarted.logged("journal-corrupt"))")
        await restarted.stop()
        guard isDirtyAtCrash else { return }
        let copies = AgentFolderTree.files(below: project.path + "/.autosave/conflicts").map {
            (try? FileContents.read(project.path + "/.autosave/conflicts/" + $0)) ?? []
        }
        let onDisk = (try? FileContents.read(file)) ?? []
        #expect(onDisk == acknowledged || copies.contains(acknowledged),
            "\(context): the last acknowledged edit's text is neither in the file (\(onDisk.count) bytes) nor in a copy (\(copies.map(\.count)))")
    }

    /// A ranged edit inside one line (an insertion, a deletion or a replacement, as typing makes),
    /// applied to the model `lines` too.
    static func randomEdit(_ random: inout SplitMix64, lines: inout [[UInt8]]) -> TextEdit {
        let line = random.below(lines.count)
        let start = random.below(lines[line].count + 1)
        let end = min(lines[line].count, start + random.below(3))
        let text = Array(String(repeating: "k", count: random.below(3)).utf8)
        lines[line].replaceSubrange(start..<end, with: text)
        return TextEdit(
            range: TextRange(start: TextPosition(line: line, character: start), end: TextPosition(line: line, character: end)), text: text)
    }
}
