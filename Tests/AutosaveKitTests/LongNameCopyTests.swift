@testable import AutosaveKit
import AutosaveTestKit
import ByteNames
import Foundation
import Testing

/// A conflict copy's name is the file's name with a stamp and a revision after it: for a name
/// near `NAME_MAX` that passed 255 bytes, every copy failed, and the flush at stop reported the
/// edit "on disk nowhere". The class of bug: *a name the agent makes from a user's name without
/// making it fit*. The property: a copy of any file the system can hold lands, under a name of at
/// most 255 bytes that still begins like the file's, keeps its extension, and is its own.
@Suite struct LongNameCopyTests {
    /// 80 CJK characters: 240 bytes, then `.txt`.
    static let longName = String(repeating: "\u{6587}", count: 79) + "\u{5B57}.txt"

    @Test func aCopyOfAFileWithALongNameLandsUnderANameThatFits() throws {
        let project = try TemporaryDirectory()
        let copies = ConflictCopies(stateDirectory: project.url(".autosave"), maxCopiesPerFile: 10, fsync: false)
        // Two long names alike but for their last character before the extension.
        let twin = String(repeating: "\u{6587}", count: 79) + "\u{8A9E}.txt"
        let first = try copies.keep(Array("first\n".utf8), of: "docs/" + Self.longName, revision: 12)
        let second = try copies.keep(Array("second\n".utf8), of: "docs/" + twin, revision: 12)
        for kept in [first, second] {
            let name = kept.path.pathComponents.last ?? ""
            #expect(name.utf8.count <= 255, "\(name.utf8.count) bytes")
            #expect(name.hasBytePrefix(String(repeating: "\u{6587}", count: 60)))
            #expect(name.contains(".txt."), "the extension is kept: \(name)")
            #expect(!kept.isDuplicate)
        }
        #expect(first.path != second.path, "two files, two copies")
        #expect(try String(contentsOfFile: first.path, encoding: .utf8) == "first\n")
        #expect(try String(contentsOfFile: second.path, encoding: .utf8) == "second\n")
        // The same bytes again are found under the shortened name, not written twice.
        #expect(try copies.keep(Array("first\n".utf8), of: "docs/" + Self.longName, revision: 13).isDuplicate)
    }

    @Test func overlappingEditsOfAFileWithALongNameKeepBothVersions() async throws {
        let harness = try await WorkspaceHarness(files: [Self.longName: "one\n"])
        _ = try await harness.write(Self.longName, "mine\n")
        try harness.project.write(Self.longName, "theirs\n")
        await harness.settleExternalChanges()
        let conflict = try await harness.logs.first(timeout: .seconds(20), "conflict") { $0.event == "conflict" }
        #expect(conflict.fields["copy"] != nil, "\(conflict.fields)")
        #expect(harness.logged("conflict-copy-failed").isEmpty)
        #expect(harness.workspace.conflictCopyCount() == 1)
        await harness.stop()
    }
}
