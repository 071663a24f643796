@_spi(Testing) @testable import AutosaveKit
import CAutosaveShims
import AutosaveTestKit
import Foundation
import SystemPackage
import Testing

@Suite struct AtomicWriterTests {
    let project: TemporaryDirectory
    let writer: AtomicWriter

    init() throws {
        project = try TemporaryDirectory()
        writer = AtomicWriter(root: project.path)
    }

    func fingerprint(_ path: String) -> Fingerprint? { Fingerprint.of(project.url(path)) }

    func leftovers() throws -> [String] {
        try FileManager.default.subpathsOfDirectory(atPath: project.path).filter { $0.contains(".autosave-") }
    }

    @Test func aNewFileGetsTheUmaskModeAndNeverReplacesAnother() throws {
        let written = try writer.write(Array("hello\n".utf8), to: "new.txt", expecting: nil)
        #expect(try project.read("new.txt") == "hello\n")
        #expect(written == fingerprint("new.txt"))
        #expect(written.mode & 0o777 == UInt32(0o666 & ~AtomicWriter.processUmask()))
        #expect(throws: WriteError.changedOnDisk(path: "new.txt")) {
            try writer.write(Array("other".utf8), to: "new.txt", expecting: nil)
        }
        #expect(try project.read("new.txt") == "hello\n")
        #expect(try leftovers().isEmpty)
    }

    @Test func replacingKeepsTheModeAndLeavesNoTempFile() throws {
        try project.write("a.sh", "old")
        chmod(project.url("a.sh"), 0o750)
        let before = try #require(fingerprint("a.sh"))
        let after = try writer.write(Array("new".utf8), to: "a.sh", expecting: before)
        #expect(try project.read("a.sh") == "new")
        #expect(after.mode & 0o7777 == 0o750)
        #expect(after.inode != before.inode, "the file was replaced, not rewritten")
        #expect(try leftovers().isEmpty)
    }

    @Test(.enabled(if: userAttributesAreSupported(), "skipped: the temp directory's file system has no user.* attributes"))
    func extendedAttributesSurviveTheReplacement() throws {
        // A tag a user or a tool put on the file (and an ACL, which is one too) is not the save's to drop.
        try project.write("tagged.txt", "old")
        let value = Array("keep me".utf8)
        let fd = open(project.url("tagged.txt"), O_WRONLY)
        let set = value.withUnsafeBytes { CAutosaveShims_setAttribute(fd, "user.note", $0.baseAddress, $0.count) }
        close(fd)  // Held open for writing, the file would be written in place (see OpenWriterTests).
        try #require(set == 0)
        let before = try #require(fingerprint("tagged.txt"))
        let after = try writer.write(Array("new".utf8), to: "tagged.txt", expecting: before)
        #expect(after.inode != before.inode, "the file was replaced, so the attribute was copied")
        var buffer = [UInt8](repeating: 0, count: 64)
        let read = buffer.withUnsafeMutableBytes { CAutosaveShims_getAttribute(project.url("tagged.txt"), "user.note", $0.baseAddress, $0.count) }
        #expect(read == value.count)
        #expect(Array(buffer.prefix(max(read, 0))) == value)
        #expect(try project.read("tagged.txt") == "new")
    }

    @Test(.enabled(if: getuid() == 0 && userAttributesAreSupported(), "skipped: trusted.* attributes need root"))
    func onlyUserAttributesAndTheACLAreCarriedOver() throws {
        // trusted.* (like security.*) is policy's, not the file's content: the new version does
        // not inherit it, while the user's tag goes over.
        try project.write("f.txt", "old")
        let fd = open(project.url("f.txt"), O_WRONLY)
        let trusted = CAutosaveShims_setAttribute(fd, "trusted.note", "t", 1)
        let user = CAutosaveShims_setAttribute(fd, "user.note", "u", 1)
        close(fd)
        try #require(trusted == 0 && user == 0)
        let before = try #require(fingerprint("f.txt"))
        let after = try writer.write(Array("new".utf8), to: "f.txt", expecting: before)
        #expect(after.inode != before.inode)
        #expect(CAutosaveShims_getAttribute(project.url("f.txt"), "user.note", nil, 0) == 1)
        #expect(CAutosaveShims_getAttribute(project.url("f.txt"), "trusted.note", nil, 0) == -1)
    }

    @Test(.enabled(if: getuid() == 0, "skipped: giving a file to another owner needs root"))
    func anotherOwnersSetuidFileKeepsItsOwnerAndEveryModeBit() throws {
        // Linux clears setuid and setgid when an executable's owner changes, root or not: the
        // owner must be given back before the mode, or a save strips them.
        try project.write("tool", "old")
        #expect(chown(project.url("tool"), 65534, 65534) == 0)
        #expect(chmod(project.url("tool"), 0o6755) == 0)
        let before = try #require(fingerprint("tool"))
        let after = try writer.write(Array("new".utf8), to: "tool", expecting: before)
        #expect(try project.read("tool") == "new")
        #expect(after.inode != before.inode, "replaced, not written in place (which keeps every bit anyway)")
        #expect(after.mode & 0o7777 == 0o6755)
        #expect(after.owner == 65534 && after.group == 65534)
        #expect(after == fingerprint("tool"))
    }

    @Test func aCommitIsDurableBeforeTheOldVersionIsRemovedAndTheOldVersionGoesOnce() throws {
        try project.write("a.txt", "old")
        let before = try #require(fingerprint("a.txt"))
        let commit = try writer.commit(Array("new".utf8), to: "a.txt", expecting: before)
        #expect(try project.read("a.txt") == "new")
        #expect(commit.fingerprint == fingerprint("a.txt"))
        let kept = try leftovers()
        #expect(kept.count == 1, "the displaced version waits under the temp name")
        #expect(try kept.map { try project.read($0) } == ["old"])
        let displaced = try #require(commit.displaced)
        displaced.remove()
        #expect(try leftovers().isEmpty)
        displaced.remove()
        #expect(try project.read("a.txt") == "new", "a second remove touches nothing")

        // Dropped without a remove (say the caller failed): released, it is removed all the same.
        let again = try writer.commit(Array("newer".utf8), to: "a.txt", expecting: commit.fingerprint)
        #expect(try leftovers().count == 1)
        _ = consume again
        #expect(try leftovers().isEmpty)
        #expect(try project.read("a.txt") == "newer")
    }

    @Test func anUnseenEditIsNeverOverwritten() throws {
        try project.write("f.txt", "base")
        let seen = try #require(fingerprint("f.txt"))
        try project.write("f.txt", "someone else's edit, longer")
        #expect(throws: WriteError.changedOnDisk(path: "f.txt")) {
            try writer.write(Array("mine".utf8), to: "f.txt", expecting: seen)
        }
        #expect(try project.read("f.txt") == "someone else's edit, longer")
        #expect(try leftovers().isEmpty)
    }

    @Test func aSymlinkIsWrittenThroughAndStaysALink() throws {
        try project.write("real/target.txt", "old")
        try FileManager.default.createSymbolicLink(atPath: project.url("link.txt"), withDestinationPath: "real/target.txt")
        let expected = try #require(fingerprint("real/target.txt"))
        _ = try writer.write(Array("through".utf8), to: "link.txt", expecting: expected)
        #expect(try project.read("real/target.txt") == "through")
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: project.url("link.txt")) == "real/target.txt")
    }

    @Test func aSymlinkLeadingOutOfTheRootIsRefused() throws {
        let outside = try TemporaryDirectory()
        try outside.write("secret.txt", "outside")
        try FileManager.default.createSymbolicLink(atPath: project.url("escape.txt"), withDestinationPath: outside.url("secret.txt"))
        #expect(throws: WriteError.refused(.linkLeadsOutside(path: "escape.txt", link: "escape.txt", target: outside.url("secret.txt")))) {
            try writer.write(Array("x".utf8), to: "escape.txt", expecting: Fingerprint.of(outside.url("secret.txt")))
        }
        #expect(try outside.read("secret.txt") == "outside")
    }

    @Test func hardLinksAreWrittenInPlaceWhenPreserved() throws {
        try project.write("a.txt", "shared")
        link(project.url("a.txt"), project.url("b.txt"))
        let before = try #require(fingerprint("a.txt"))
        let after = try writer.write(Array("both see this".utf8), to: "a.txt", expecting: before)
        #expect(after.inode == before.inode)
        #expect(try project.read("b.txt") == "both see this")
    }

    @Test func hardLinksAreBrokenWhenAskedTo() throws {
        try project.write("a.txt", "shared")
        link(project.url("a.txt"), project.url("b.txt"))
        let breaking = AtomicWriter(root: project.path, hardLinks: .break)
        _ = try breaking.write(Array("only a".utf8), to: "a.txt", expecting: fingerprint("a.txt"))
        #expect(try project.read("a.txt") == "only a")
        #expect(try project.read("b.txt") == "shared")
    }

    /// Found by the crash soak (the agent frozen between its check and its rename while a tool
    /// replaced the file): the swap puts the tool's version back and the save is refused.
    @Test func aFileReplacedBetweenTheCheckAndTheRenameIsNotLost() throws {
        try project.write("f.txt", "base\n")
        let root = project.path
        let racing = AtomicWriter(root: root, faults: FaultPoints(beforeRename: { _ in
            try? "theirs\n".write(toFile: root + "/.f.txt.other-tool", atomically: false, encoding: .utf8)
            rename(root + "/.f.txt.other-tool", root + "/f.txt")
        }))
        #expect(throws: WriteError.changedOnDisk(path: "f.txt")) {
            try racing.write(Array("mine\n".utf8), to: "f.txt", expecting: fingerprint("f.txt"))
        }
        #expect(try project.read("f.txt") == "theirs\n")
        #expect(try leftovers().isEmpty)
    }

    @Test func removalChecksTheVersionFirst() throws {
        try project.write("f.txt", "x")
        let seen = try #require(fingerprint("f.txt"))
        try project.write("f.txt", "changed meanwhile!")
        #expect(throws: WriteError.changedOnDisk(path: "f.txt")) { try writer.remove("f.txt", expecting: seen) }
        #expect(project.exists("f.txt"))
        try writer.remove("f.txt", expecting: try #require(fingerprint("f.txt")))
        #expect(!project.exists("f.txt"))
    }

    @Test func ownWritesAreRecordedBeforeTheyLand() throws {
        try project.write("f.txt", "x")
        let written = try writer.write(Array("mine".utf8), to: "f.txt", expecting: fingerprint("f.txt"))
        #expect(writer.ownWrites.isOwn("f.txt", current: written))
        #expect(writer.ownWrites.isOwn("f.txt", current: written), "a swap's events may settle in two windows")
        #expect(!writer.ownWrites.isOwn("f.txt", current: nil), "someone else removed it")
        #expect(!writer.ownWrites.isOwn("f.txt", current: written), "a record that stopped matching is gone")
    }

    @Test func ownRemovalsAreRecordedBeforeTheyLand() throws {
        try project.write("f.txt", "x")
        try writer.remove("f.txt", expecting: try #require(fingerprint("f.txt")))
        #expect(writer.ownWrites.isOwn("f.txt", current: nil))
        try project.write("f.txt", "someone else's")
        #expect(!writer.ownWrites.isOwn("f.txt", current: fingerprint("f.txt")))
    }

    @Test(.enabled(if: SmallFilesystem.isAvailable, "skipped: mounting a tmpfs needs root"))
    func aFullDiskFailsCleanlyAndLeavesTheOldFile() throws {
        let disk = try SmallFilesystem(bytes: 64 << 10)
        let small = AtomicWriter(root: disk.path)
        _ = try small.write(Array("precious".utf8), to: "f.txt", expecting: nil)
        let before = Fingerprint.of(disk.path + "/f.txt")
        let huge = [UInt8](repeating: 0x41, count: 1 << 20)
        #expect(throws: WriteError.system(path: "f.txt", operation: "write", .noSpace)) {
            try small.write(huge, to: "f.txt", expecting: before)
        }
        #expect(try FileContents.read(disk.path + "/f.txt") == Array("precious".utf8))
        #expect(try FileManager.default.contentsOfDirectory(atPath: disk.path) == ["f.txt"])
    }
}

/// Whether files in a new temp directory take `user.*` attributes (tmpfs before Linux 6.6 does not).
private func userAttributesAreSupported() -> Bool {
    guard let directory = try? TemporaryDirectory(), (try? directory.write("probe", "")) != nil else { return false }
    let fd = open(directory.url("probe"), O_WRONLY)
    defer { close(fd) }
    return CAutosaveShims_setAttribute(fd, "user.probe", nil, 0) == 0
}
