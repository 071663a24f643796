@testable import AutosaveKit
import AutosaveTestKit
import Glibc
import SystemPackage
import Testing

/// The one wrapper of raw system calls: EINTR retried in one place (never for fsync), errors typed,
/// and the folder-relative calls swift-system lacks.
@Suite struct SystemCallTests {
    @Test func anInterruptedCallIsMadeAgainUntilItAnswers() throws {
        var calls = 0
        let result = try SystemCall.value { () -> CInt in
            calls += 1
            if calls < 3 {
                errno = EINTR
                return -1
            }
            return 7
        }
        #expect(result == 7)
        #expect(calls == 3)
    }

    @Test func anInterruptedCallIsMadeOnceWhenTheCallerSaysSo() {
        var calls = 0
        #expect(throws: Errno.interrupted) {
            try SystemCall.check(retryOnInterrupt: false) { () -> CInt in
                calls += 1
                errno = EINTR
                return -1
            }
        }
        #expect(calls == 1)
    }

    @Test func aFailureThrowsItsErrno() {
        #expect(throws: Errno.noSuchFileOrDirectory) {
            try SystemCall.check { () -> CInt in
                errno = ENOENT
                return -1
            }
        }
    }

    @Test func aFolderDescriptorOpensRenamesAndRemovesByName() throws {
        let project = try TemporaryDirectory()
        _ = try project.write("a.txt", "a")
        _ = try project.write("b.txt", "b")
        let folder = try FileDescriptor.open(FilePath(project.path), .readOnly, options: [.directory, .closeOnExec])
        defer { try? folder.close() }

        let file = try folder.open("c.txt", .writeOnly, options: [.create, .exclusiveCreate, .noFollow], permissions: [.ownerReadWrite])
        try file.writeAll(Array("cc".utf8), atOffset: 0)
        try file.truncate(to: 1)
        try file.sync()
        try file.close()
        #expect(try project.read("c.txt") == "c")
        #expect(throws: Errno.fileExists) {
            try folder.open("c.txt", .writeOnly, options: [.create, .exclusiveCreate], permissions: [.ownerReadWrite])
        }

        try folder.rename("a.txt", to: "b.txt", .exchanging)
        #expect(try project.read("a.txt") == "b")
        #expect(try project.read("b.txt") == "a")
        #expect(throws: Errno.fileExists) { try folder.rename("a.txt", to: "b.txt", .failingIfTaken) }
        try folder.rename("a.txt", to: "b.txt")
        #expect(try project.read("b.txt") == "b")
        #expect(!folder.hasEntry("a.txt"))

        try folder.removeEntry("b.txt")
        #expect(!folder.hasEntry("b.txt"))
        #expect(throws: Errno.noSuchFileOrDirectory) { try folder.removeEntry("b.txt") }
    }
}
