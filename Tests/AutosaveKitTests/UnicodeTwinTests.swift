@testable import AutosaveKit
import AutosaveTestKit
import Foundation
import Glibc
import SystemPackage
import Testing

/// Names equal as Unicode but different as bytes are two files on Linux, and two to the agent:
/// `café.txt` with a precomposed `é` (NFC) and with `e` and U+0301 (NFD), at the root and below,
/// through every request. Before the names were compared as bytes, `cat` of one printed the
/// other and a write to one overwrote the other.
@Suite struct UnicodeTwinTests {
    static let composed = "caf\u{E9}"
    static let decomposed = "cafe\u{301}"

    /// Writes `text` at `relative` with the name's exact bytes (no library in between).
    static func plant(_ project: TemporaryDirectory, _ relative: String, _ text: String) throws {
        let folder = relative.split(separator: "/", omittingEmptySubsequences: true).dropLast()
        var partial = project.path
        for part in folder {
            partial += "/" + part
            mkdir(partial, 0o755)
        }
        try TemporaryDirectory.writeFile(project.url(relative), Array(text.utf8))
    }

    static func read(_ project: TemporaryDirectory, _ relative: String) throws -> String {
        let fd = open(project.url(relative), O_RDONLY)
        guard fd >= 0 else { throw POSIXError(.ENOENT) }
        defer { close(fd) }
        return String(decoding: try FileContents.read(descriptor: .init(rawValue: fd)), as: UTF8.self)
    }

    @Test(arguments: ["", "docs/", "\(composed)/", "\(decomposed)/"])
    func twinsAreTwoFilesThroughEveryRequest(folder: String) async throws {
        let harness = try await WorkspaceHarness()
        let nfc = folder + Self.composed + ".txt"
        let nfd = folder + Self.decomposed + ".txt"
        try Self.plant(harness.project, nfc, "composed\n")
        try Self.plant(harness.project, nfd, "decomposed\n")
        await harness.settleExternalChanges()
        // read / open
        #expect(try await harness.text(nfc) == "composed\n")
        #expect(try await harness.text(nfd) == "decomposed\n")
        #expect(await harness.workspace.status().count == 2)
        // write, then save
        _ = try await harness.write(nfd, "decomposed, edited\n")
        try await harness.workspace.save([nfd])
        #expect(try Self.read(harness.project, nfd) == "decomposed, edited\n")
        #expect(try Self.read(harness.project, nfc) == "composed\n")
        #expect(try await harness.text(nfc) == "composed\n")
        // a ranged edit
        let at = TextPosition(line: 0, character: 0)
        _ = try await harness.workspace.acceptEdits(nfc, [TextEdit(range: TextRange(start: at, end: at), text: Array("NFC ".utf8))], encoding: .utf32)
        try await harness.workspace.save([nfc])
        #expect(try Self.read(harness.project, nfc) == "NFC composed\n")
        #expect(try Self.read(harness.project, nfd) == "decomposed, edited\n")
        // a patch naming one of them
        let patch = "--- a/\(nfd)\n+++ b/\(nfd)\n@@ -1 +1 @@\n-decomposed, edited\n+decomposed, patched\n"
        let patched = try await harness.workspace.applyPatch(Array(patch.utf8))
        #expect(patched.map(\.path) == [nfd])
        try await harness.workspace.saveAll()
        #expect(try Self.read(harness.project, nfd) == "decomposed, patched\n")
        #expect(try Self.read(harness.project, nfc) == "NFC composed\n")
        // an edit outside the agent reaches only its own buffer
        try Self.plant(harness.project, nfc, "composed, from outside\n")
        await harness.settleExternalChanges()
        #expect(try await harness.text(nfc) == "composed, from outside\n")
        #expect(try await harness.text(nfd) == "decomposed, patched\n")
        // close one, remove the other
        try await harness.workspace.close(nfc)
        #expect(await harness.workspace.status().map(\.path) == [nfd])
        _ = try await harness.workspace.remove(nfd)
        #expect(!FileManager.default.fileExists(atPath: harness.project.url(nfd)))
        #expect(try Self.read(harness.project, nfc) == "composed, from outside\n")
        await harness.stop()
    }

    /// The root `…/café` (NFC) and a folder `…/café` (NFD) beside it: a path through `..` into
    /// the twin, or an absolute one, leads outside, and is refused.
    @Test func theRootsTwinBesideItIsOutside() async throws {
        let base = try TemporaryDirectory()
        let root = base.url(Self.composed)
        let twin = base.url(Self.decomposed)
        mkdir(root, 0o755)
        mkdir(twin, 0o755)
        try TemporaryDirectory.writeFile(twin + "/notes.txt", Array("the twin's\n".utf8))
        let harness = try await WorkspaceHarness(root: root, stateDirectory: root + "/.autosave")
        for path in ["../\(Self.decomposed)/notes.txt", twin + "/notes.txt"] {
            await #expect(throws: WorkspaceError.self, "\(path)") { try await harness.workspace.read(path) }
            await #expect(throws: WorkspaceError.self, "\(path)") { try await harness.write(path, "mine\n") }
        }
        #expect(String(decoding: try FileContents.read(twin + "/notes.txt"), as: UTF8.self) == "the twin's\n")
        #expect(await harness.workspace.status().isEmpty)
        await harness.stop()
    }

    /// `.git/` followed by a combining mark: the kernel splits it at the `/` byte, so it lies in
    /// `.git/`; split as `Character`s, `/` and the mark were one and `.git` was never seen.
    @Test func aCombiningMarkAfterASlashDoesNotHideGit() async throws {
        let harness = try await WorkspaceHarness(files: [".git/HEAD": "ref\n"])
        let sneaky = ".git/\u{301}hooks-pre-commit"
        await #expect(throws: WorkspaceError.pathRefused(.insideGit(path: sneaky, link: nil))) {
            try await harness.write(sneaky, "#!/bin/sh\n")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: harness.project.url(".git")) == ["HEAD"])
        await harness.stop()
    }
}
