import AutosaveKit
@testable import AutosaveMCP
import Testing

/// Whether a patch whose answer was lost is in, told from the files (issue 33, item 6): what is in
/// is not applied again, and what cannot be told is said so.
@Suite struct PatchOutcomeTests {
    func diff(_ text: String) throws -> UnifiedDiff { try UnifiedDiff(parsing: Array(text.utf8)) }
    func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

    let change = "--- a/a.py\n+++ b/a.py\n@@ -1,2 +1,3 @@\n-x = 1\n+x = 2\n+y = 2\n z = 3\n"

    @Test func aChangedFileShowsWhetherTheHunksAreIn() throws {
        #expect(PatchOutcome.judge(try diff(change), texts: [bytes("x = 1\nz = 3\n")]) == .notApplied)
        #expect(PatchOutcome.judge(try diff(change), texts: [bytes("x = 2\ny = 2\nz = 3\n")]) == .applied)
        #expect(PatchOutcome.judge(try diff(change), texts: [bytes("something else\n")]) == .unknown(["a.py"]))
    }

    @Test func aHunkThatOnlyAddsFitsBothWaysAndCannotBeTold() throws {
        let adds = "--- a/a.py\n+++ b/a.py\n@@ -1,1 +1,2 @@\n x = 1\n+y = 2\n"
        #expect(PatchOutcome.judge(try diff(adds), texts: [bytes("x = 1\ny = 2\n")]) == .unknown(["a.py"]))
    }

    @Test func creationsAndDeletionsAreToldByTheFilesBeingThere() throws {
        let both = "--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1 @@\n+hi\n--- a/old.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-bye\n"
        #expect(PatchOutcome.judge(try diff(both), texts: [nil, bytes("bye\n")]) == .notApplied)
        #expect(PatchOutcome.judge(try diff(both), texts: [bytes("hi\n"), nil]) == .applied)
        #expect(PatchOutcome.judge(try diff(both), texts: [bytes("hi\n"), bytes("bye\n")]) == .unknown(["old.txt"]))
    }
}
