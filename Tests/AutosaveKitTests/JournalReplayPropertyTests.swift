@testable import AutosaveKit
import AutosaveTestKit
import Foundation
import PropertyBased
import Testing

/// Whatever happens to a large file — keystrokes, saves, tools writing it in place, replacing it
/// by rename, appending — the journal, read as a crash at that moment would leave it, gives back
/// every unsaved edit exactly: a text the dirty buffer held at or after its last edit (merges
/// with the disk since are not journaled: recovery sets the text against the disk again, and
/// keeps both when the disk moved on), and nothing but the file for a clean one.
///
/// The class of bug: a recovery that depends on something outside the journal (the file a chain
/// of edits stands on) that a tool or the agent itself changed.
@Suite struct JournalReplayPropertyTests {
    static let path = "big.txt"
    /// Past the size from which the journal pins a clean file instead of copying it.
    static let original = (0..<40_000).map { "line \($0) of a file large enough to be pinned\n" }.joined()

    @Test func aCrashAtAnyQuietPointRecoversEveryDirtyBuffersText() async throws {
        var random = Xoshiro(seed: (0x6A6F_7572, 0x6E61_6C21, 0x7265_706C, 0x6179_2121))
        for scenario in 0..<6 {
            let harness = try await WorkspaceHarness(files: [Self.path: Self.original]) {
                $0.autosave.delayMs = 3_600_000
                $0.autosave.maxDelayMs = 3_600_000
            }
            _ = try await harness.workspace.open(Self.path)
            var steps: [String] = []
            // The texts the buffer held since its last edit: what the journal may give back.
            var heldSinceEdit: [[UInt8]?] = []
            for _ in 0..<24 {
                let step = try await Self.randomStep(&random, harness)
                steps.append(step)
                if step.hasPrefix("edit") { heldSinceEdit = [] }
                await harness.settleExternalChanges()
                heldSinceEdit.append(try await harness.workspace.read(Self.path).content)
                try await Self.expectRecoveryMatches(harness, held: heldSinceEdit, "scenario \(scenario), after \(steps)")
            }
            await harness.stop()
        }
    }

    /// One thing a person, a tool or the agent does; returns its name.
    static func randomStep(_ random: inout Xoshiro, _ harness: WorkspaceHarness) async throws -> String {
        let file = harness.project.path + "/" + path
        switch random.next() % 10 {
        case 0...4:
            let line = Int(random.next() % 30_000)
            let position = TextPosition(line: line, character: Int(random.next() % 5))
            let end = TextPosition(line: line, character: position.character + Int(random.next() % 3))
            _ = try await harness.workspace.acceptEdits(
                path, [TextEdit(range: TextRange(start: position, end: end), text: Array("k".utf8))], encoding: .utf8)
            return "edit \(line)"
        case 5:
            try await harness.workspace.save([path])
            return "save"
        case 6:
            // A tool writing the file in place (its inode, so the pin's too).
            let handle = try #require(FileHandle(forWritingAtPath: file))
            try handle.seek(toOffset: random.next() % 1000)
            try handle.write(contentsOf: Data("IN PLACE".utf8))
            try handle.close()
            return "in-place"
        case 7:
            let handle = try #require(FileHandle(forWritingAtPath: file))
            try handle.seekToEnd()
            try handle.write(contentsOf: Data("appended line\n".utf8))
            try handle.close()
            return "append"
        default:
            // A tool replacing the file by rename (git checkout, sed -i).
            var text = try FileContents.read(file)
            text.replaceSubrange(0..<4, with: Array("LINE".utf8))
            try TemporaryDirectory.writeFile(file + ".tmp", text)
            #expect(rename(file + ".tmp", file) == 0)
            return "replace"
        }
    }

    /// Copies the state directory as a crash would leave it (the pins' bytes as they are now)
    /// and recovers from the copy.
    static func expectRecoveryMatches(_ harness: WorkspaceHarness, held: [[UInt8]?], _ context: String) async throws {
        let crash = try TemporaryDirectory()
        let journal = harness.project.path + "/.autosave/journal"
        let copy = Process()
        copy.executableURL = URL(fileURLWithPath: "/bin/cp")
        copy.arguments = ["-r", journal, crash.path + "/journal"]
        try copy.run()
        copy.waitUntilExit()
        let (_, recovery) = try EditJournal.open(directory: crash.path + "/journal", fsync: false)
        #expect(recovery.brokenChains.isEmpty, "\(context): \(recovery.brokenChains)")
        let status = try #require(await harness.workspace.status().first { $0.path == path })
        let recovered = recovery.records.first { $0.path == path }
        if status.isDirty {
            #expect(recovered != nil && held.contains(recovered?.content),
                "\(context): a crash now would bring back no text the buffer held since its last edit")
        } else if let recovered {
            #expect(recovered.content == (try? FileContents.read(harness.project.path + "/" + path)),
                "\(context): a clean buffer's recovered record is not the file")
        }
    }

    /// A buffer closed after a save and opened again counts its revisions from 0 again: its new
    /// edit, revision 1, comes after the `saved` marker of revision 5 and is newer all the same.
    @Test func anEditAfterAReopenIsRecoveredThoughItsRevisionIsLowerThanTheSavedOne() async throws {
        let harness = try await WorkspaceHarness(files: ["a.txt": "one\n"])
        for word in ["two", "three", "four", "five", "six"] { _ = try await harness.write("a.txt", word + "\n") }
        try await harness.workspace.save(["a.txt"])
        try await harness.workspace.close("a.txt")
        let revision = try await harness.write("a.txt", "seven\n")
        #expect(revision == 1)
        try await Self.expectRecoveryMatches(harness, path: "a.txt", held: [Array("seven\n".utf8)], "after a reopen")
        await harness.stop()
    }

    static func expectRecoveryMatches(_ harness: WorkspaceHarness, path: String, held: [[UInt8]?], _ context: String) async throws {
        let crash = try TemporaryDirectory()
        let copy = Process()
        copy.executableURL = URL(fileURLWithPath: "/bin/cp")
        copy.arguments = ["-r", harness.project.path + "/.autosave/journal", crash.path + "/journal"]
        try copy.run()
        copy.waitUntilExit()
        let (_, recovery) = try EditJournal.open(directory: crash.path + "/journal", fsync: false)
        #expect(held.contains(recovery.records.first { $0.path == path }?.content), "\(context)")
    }
}
