import AutosaveTestKit
import Foundation
import Testing

@testable import AutosaveHistory

/// `forget`: a path's versions go, and their bytes are gone from the database's files, not only
/// from its answers; what other paths hold stays and reads back as it was.
@Suite struct VersionStoreForgetTests {
    /// Whether `needle` occurs anywhere in the database's main file or its WAL.
    static func filesHold(_ needle: [UInt8], _ fixture: HistoryFixture) throws -> Bool {
        for file in [fixture.path, fixture.path + "-wal"] {
            guard FileManager.default.fileExists(atPath: file) else { continue }
            let bytes = try readFile(file)
            guard bytes.count >= needle.count else { continue }
            if bytes.withUnsafeBufferPointer({ haystack in
                haystack.indices.dropLast(needle.count - 1).contains { start in
                    haystack[start] == needle[0] && Array(haystack[start..<start + needle.count]) == needle
                }
            }) {
                return true
            }
        }
        return false
    }

    @Test func aForgottenSecretIsGoneFromTheFilesAndEverythingElseReadsBack() throws {
        let fixture = try HistoryFixture()
        let store = try fixture.open()
        // Random bytes compress to nothing: zstd keeps them as raw literals, so the token is in
        // the file as it is, and a search of the raw bytes finds it.
        let token = randomBytes(48, seed: 0x5EC_12E7)
        let before = randomBytes(1500, seed: 1), after = randomBytes(1500, seed: 2)
        try store.record(VersionInput(path: "secret.env", content: before + token + after, kind: .saved, who: "cli", time: 1))
        try store.record(VersionInput(path: "secret.env", content: before + token + after + [10], kind: .saved, who: "cli", time: 2))
        // Moved away with the token taken out: its content is compressed against the secret's
        // (the prefix it shares), and must read back once that is gone.
        let cleaned = before + randomBytes(48, seed: 3) + after
        let moved = try #require(
            try store.record(VersionInput(path: "notes.env", content: cleaned, kind: .moved, who: "external", time: 3, from: "secret.env")))
        let other = try #require(try store.record(input("other.txt", "nothing to hide\n", time: 4)))
        #expect(try Self.filesHold(token, fixture), "the token is in the files before: the search can find it")

        let report = try store.forget(path: "secret.env")
        #expect(report.versions == 2 && report.contents == 2 && report.sharedContents == 0)
        #expect(report.reencoded == 1, "notes.env's content no longer refers to the secret's")
        #expect(try !Self.filesHold(token, fixture), "the token is in neither history.sqlite nor its WAL")
        #expect(try store.versions(of: "secret.env").isEmpty)
        #expect(try store.content(of: moved.id) == cleaned)
        #expect(try store.content(of: other.id) == Array("nothing to hide\n".utf8))
        store.close()
        #expect(try !Self.filesHold(token, fixture), "nor after the store closed")
        #expect(try fixture.open().content(of: moved.id) == cleaned, "after reopening too")
    }

    @Test func forgettingAMovedFileForgetsItsVersionsUnderItsOldName() throws {
        let fixture = try HistoryFixture()
        let store = try fixture.open()
        let token = randomBytes(64, seed: 77)
        try store.record(VersionInput(path: "old.key", content: token, kind: .saved, who: "cli", time: 1))
        try store.record(VersionInput(path: "new.key", content: nil, kind: .moved, who: "external", time: 2, from: "old.key"))
        #expect(try store.versions(of: "new.key").count == 2, "history follows the file back to its old name")
        let report = try store.forget(path: "new.key")
        #expect(report.versions == 2)
        #expect(try store.versions(below: "").isEmpty)
        #expect(try !Self.filesHold(token, fixture))
    }

    @Test func theSameBytesUnderAnotherNameStayThatNames() throws {
        let fixture = try HistoryFixture()
        let store = try fixture.open()
        let token = randomBytes(64, seed: 78)
        try store.record(VersionInput(path: "a.key", content: token, kind: .saved, who: "cli", time: 1))
        let copy = try #require(try store.record(VersionInput(path: "copy.key", content: token, kind: .saved, who: "cli", time: 2)))
        let report = try store.forget(path: "a.key")
        #expect(report.versions == 1 && report.contents == 0 && report.sharedContents == 1)
        #expect(try store.content(of: copy.id) == token)
        #expect(try Self.filesHold(token, fixture), "copy.key's version holds them")
    }

    @Test func aFolderIsForgottenWithEverythingBelowItAndNothingBeside() throws {
        let fixture = try HistoryFixture()
        let store = try fixture.open()
        for path in ["d/a", "d/e/b", "dd/c", "d.txt"] { try store.record(input(path, "in \(path)\n")) }
        let report = try store.forget(path: "d")
        #expect(report.versions == 2)
        #expect(Set(try store.versions(below: "").map(\.path)) == ["dd/c", "d.txt"])
        #expect(try store.forget(path: "nothing-here").versions == 0)
    }
}
