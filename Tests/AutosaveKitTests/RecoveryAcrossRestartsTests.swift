@_spi(Testing) @testable import AutosaveKit
import AutosaveTestKit
import Foundation
import Testing

/// A retry of an edit the client never heard the answer to (the same change id, after a crash and
/// a restart) is applied once.
///
/// The class of bug: state that makes a retry safe kept only in memory. A buffer remembered the
/// change ids it applied while it lived; a restart forgot them, and the retry was applied again
/// (`hello` became `XXhello`). The property: the id of every edit the journal took is remembered
/// across restarts (the latest `RecentChangeIDs.limit`), saved or not.
@Suite struct ChangeIDsAcrossRestartsTests {
    static let insertX = [TextEdit(range: TextRange(start: TextPosition(line: 0, character: 0), end: TextPosition(line: 0, character: 0)), text: Array("X".utf8))]

    @Test(arguments: [false, true])
    func aRetriedEditIsAppliedOnceAfterACrash(savedBeforeTheCrash: Bool) async throws {
        let project = try TemporaryDirectory()
        try project.write("a.txt", "hello\n")
        let id = UUID()
        do {
            let harness = try await WorkspaceHarness(root: project.path)
            try await harness.workspace.acceptEdits("a.txt", Self.insertX, encoding: .utf8, changeID: id).waitUntilDurable()
            if savedBeforeTheCrash { try await harness.workspace.save(["a.txt"]) }
            await harness.workspace._abandon()
        }
        let restarted = try await WorkspaceHarness(root: project.path)
        let retried = try await restarted.workspace.acceptEdits("a.txt", Self.insertX, encoding: .utf8, changeID: id)
        try await retried.waitUntilDurable()
        #expect(try await restarted.text("a.txt") == "Xhello\n", "applied once")
        #expect(retried.revision == (try await restarted.workspace.read("a.txt").revision), "answered with the revision that holds it")
        await restarted.stop()
        #expect(try project.read("a.txt") == "Xhello\n")
        // And a second restart still knows it: the id outlives the journal's rewrite at start.
        let again = try await WorkspaceHarness(root: project.path)
        _ = try await again.workspace.acceptEdits("a.txt", Self.insertX, encoding: .utf8, changeID: id)
        #expect(try await again.text("a.txt") == "Xhello\n")
        await again.stop()
    }

    /// Closing a buffer forgets it, not the ids the journal took for its path.
    @Test func aRetryAfterTheBufferWasClosedIsAppliedOnce() async throws {
        let harness = try await WorkspaceHarness(files: ["a.txt": "hello\n"])
        let id = UUID()
        _ = try await harness.workspace.acceptEdits("a.txt", Self.insertX, encoding: .utf8, changeID: id)
        try await harness.workspace.close("a.txt")
        _ = try await harness.workspace.acceptEdits("a.txt", Self.insertX, encoding: .utf8, changeID: id)
        #expect(try await harness.text("a.txt") == "Xhello\n")
        await harness.stop()
    }
}

