@_spi(Testing) @testable import AutosaveKit
import AutosaveTestKit
import Foundation
import SystemPackage
import Testing

/// Names and links chosen to trick the agent into reading or writing outside the root.
@Suite struct HostilePathTests {
    @Test func aSymlinkPlantedAtTheTempNameIsNeverFollowed() throws {
        let project = try TemporaryDirectory()
        let outside = try TemporaryDirectory()
        try outside.write("secret.txt", "not yours\n")
        try project.write("a.txt", "before\n")
        symlink(outside.url("secret.txt"), project.url(".a.txt.planted.tmp"))
        let writer = AtomicWriter(root: project.path, faults: FaultPoints(tempName: { ".\($0).planted.tmp" }))
        #expect(throws: WriteError.system(path: "a.txt", operation: "create temp file", .fileExists)) {
            try writer.write(Array("mine\n".utf8), to: "a.txt", expecting: Fingerprint.of(project.url("a.txt")))
        }
        #expect(try outside.read("secret.txt") == "not yours\n")
        #expect(try project.read("a.txt") == "before\n")
        var info = stat()
        #expect(lstat(project.url(".a.txt.planted.tmp"), &info) == 0 && info.st_mode & S_IFMT == S_IFLNK, "the planted link is left as it was")
    }

    @Test func aHardLinkToAFileOutsideIsNotWrittenThroughWhenLinksAreBroken() async throws {
        let outside = try TemporaryDirectory()
        try outside.write("shared.txt", "outside\n")
        let harness = try await WorkspaceHarness { $0.write.hardLinks = .break }
        link(outside.url("shared.txt"), harness.project.url("linked.txt"))
        _ = try await harness.write("linked.txt", "mine\n")
        try await harness.advance(by: harness.delay)
        _ = try await harness.logs.first(timeout: .seconds(20), "saved") { $0.event == "saved" }
        #expect(try outside.read("shared.txt") == "outside\n")
        #expect(try harness.project.read("linked.txt") == "mine\n")
        await harness.stop()
    }

    @Test func componentsUpTo255BytesWorkAndLongerOnesAreRefusedByName() async throws {
        let harness = try await WorkspaceHarness()
        let longest = String(repeating: "n", count: 251) + ".txt"
        // The agent does not make missing directories: one that vanished may have been removed on purpose.
        try FileManager.default.createDirectory(atPath: harness.project.url("dir"), withIntermediateDirectories: false)
        _ = try await harness.write("dir/" + longest, "fits\n")
        try await harness.advance(by: harness.delay)
        _ = try await harness.logs.first(timeout: .seconds(20), "saved") { $0.event == "saved" }
        #expect(try harness.project.read("dir/" + longest) == "fits\n")
        let tooLong = longest + "x"
        await #expect(throws: WorkspaceError.invalidPath(path: tooLong, reason: "a component is longer than 255 bytes")) {
            try await harness.workspace.write(tooLong, Array("no\n".utf8))
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: harness.project.path).filter { $0.hasPrefix("nnn") }.isEmpty)
        await harness.stop()
    }

    @Test func aNameWithANewlineIsSavedUnderExactlyThatName() async throws {
        let harness = try await WorkspaceHarness()
        _ = try await harness.write("two\nlines.txt", "odd name\n")
        try await harness.advance(by: harness.delay)
        let saved = try await harness.logs.first(timeout: .seconds(20), "saved") { $0.event == "saved" }
        #expect(saved.fields["path"] == "two\nlines.txt")
        #expect(try harness.project.read("two\nlines.txt") == "odd name\n")
        await harness.stop()
    }

    @Test func aNameThatIsNotUTF8IsNeverReadOrWrittenUnderAnotherName() async throws {
        let harness = try await WorkspaceHarness()
        // "bad<0xFF>.txt": a valid Linux name that no JSON string can spell.
        let raw: [UInt8] = Array("bad".utf8) + [0xFF] + Array(".txt".utf8)
        let path = Array(harness.project.path.utf8) + [UInt8(ascii: "/")] + raw + [0]
        let fd = path.withUnsafeBufferPointer { $0.withMemoryRebound(to: CChar.self) { open($0.baseAddress!, O_WRONLY | O_CREAT, 0o644) } }
        #expect(fd >= 0)
        _ = "someone's bytes\n".withCString { write(fd, $0, 16) }
        close(fd)
        await harness.settleExternalChanges()
        // Its name cannot be shown exactly, so it is not tracked (see the README's limits).
        #expect(harness.logged("external-change").isEmpty)
        // A client that types the name it saw gets a new file of its own, never the original.
        _ = try await harness.write("bad\u{FFFD}.txt", "client\n")
        try await harness.advance(by: harness.delay)
        _ = try await harness.logs.first(timeout: .seconds(20), "saved") { $0.event == "saved" }
        let names = try FileManager.default.contentsOfDirectory(atPath: harness.project.path).filter { $0.hasPrefix("bad") }
        #expect(names.count == 2)
        #expect(try harness.project.read("bad\u{FFFD}.txt") == "client\n")
        // The original, read by its real bytes, is untouched.
        var original = [CChar](repeating: 0, count: 64)
        let reopened = path.withUnsafeBufferPointer { $0.withMemoryRebound(to: CChar.self) { open($0.baseAddress!, O_RDONLY) } }
        let count = read(reopened, &original, 64)
        close(reopened)
        #expect(count == 16 && String(decoding: original.prefix(16).map { UInt8(bitPattern: $0) }, as: UTF8.self) == "someone's bytes\n")
        await harness.stop()
    }
}
