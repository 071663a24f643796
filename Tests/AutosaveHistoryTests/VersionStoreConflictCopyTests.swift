import AutosaveTestKit
import Foundation
import Testing

@testable import AutosaveHistory

/// Conflict copies in history: a version of the file, linked to the version its bytes came from,
/// that is never taken for what the file holds (its latest, the version a tombstone keeps, the
/// one a repeat is compared with, the one retention keeps last).
@Suite struct VersionStoreConflictCopyTests {
    static let copyPath = ".autosave/conflicts/a.txt.20261128-090000.4"

    func copy(_ content: String, of path: String = "a.txt", from parent: String?, time: Int64 = 1_000) -> VersionInput {
        VersionInput(
            path: path, content: Array(content.utf8), kind: .conflictCopy, who: "nvim:7", time: time, from: Self.copyPath,
            parentContent: parent.map { Array($0.utf8) })
    }

    @Test func aCopyIsLinkedToItsParentAndIsNeverTheFilesLatest() throws {
        let fixture = try HistoryFixture()
        let store = try fixture.open()
        let base = try #require(try store.record(input("a.txt", "one\ntwo\n")))
        let theirs = try #require(try store.record(input("a.txt", "one\nTWO\n", .modified, who: "external")))
        // The buffer kept the disk's version; its edits, made on `base`, went to the copy.
        let mine = try #require(try store.record(copy("one\nmine\n", from: "one\ntwo\n")))
        #expect(mine.parent == base.id, "the copy's edits were made on the base")
        #expect(mine.from == Self.copyPath)
        #expect(try store.latest(of: "a.txt")?.id == theirs.id, "the file holds the outside change, not the copy")
        #expect(try store.versions(of: "a.txt").map(\.id) == [mine.id, theirs.id, base.id], "the copy is listed with the file")
        #expect(try store.content(of: mine.id) == Array("one\nmine\n".utf8))

        // What the file holds, seen again, is no new version: the copy is not what it is compared with.
        #expect(try store.record(input("a.txt", "one\nTWO\n", .modified, who: "external")) == nil)
        // The other way round: the buffer kept its edits and the copy holds the disk's version,
        // whose parent is that very version.
        let disk = try #require(try store.record(copy("one\nTWO\n", from: "one\nTWO\n")))
        #expect(disk.parent == theirs.id)
        // Bytes history never held leave the link unknown.
        #expect(try store.record(copy("x\n", from: "never recorded\n"))?.parent == nil)
        #expect(try store.record(copy("y\n", from: nil))?.parent == nil)
    }

    @Test func aRemovalKeepsWhatTheFileHeldAndStaysRestorablePastALaterCopy() throws {
        let fixture = try HistoryFixture()
        let store = try fixture.open()
        let held = try #require(try store.record(input("d/a.txt", "held\n")))
        _ = try #require(try store.record(copy("edits\n", of: "d/a.txt", from: "held\n")))
        let tombstone = try #require(try store.record(input("d/a.txt", nil, .removed, who: "external")))
        #expect(try store.content(of: tombstone.id) == Array("held\n".utf8), "the tombstone keeps the file's bytes, not the copy's")
        // The buffer's edits had nowhere to land after the removal: kept aside, after the tombstone.
        let aside = try #require(try store.record(copy("edits 2\n", of: "d/a.txt", from: "held\n")))
        #expect(aside.parent == held.id, "linked to the version the file held, not to the tombstone keeping its bytes")
        #expect(try store.deleted(below: "d").map(\.id) == [tombstone.id], "still a removed file that can come back")
        #expect(try store.latest(of: "d/a.txt")?.kind == .removed)
    }

    @Test func theCapDropsACopyBeforeTheFilesLatestVersion() throws {
        let fixture = try HistoryFixture()
        let store = try fixture.open()
        let now: Int64 = 1_800_000_000_000
        let latest = try #require(
            try store.record(VersionInput(path: "f", content: randomBytes(64 << 10, seed: 1), kind: .saved, who: "cli", time: now - 3_000)))
        let newer = try #require(
            try store.record(
                VersionInput(
                    path: "f", content: randomBytes(64 << 10, seed: 2), kind: .conflictCopy, who: "cli", time: now - 2_000,
                    from: "copy")))
        try store.checkpointAndTruncate()
        // Room for one of the two incompressible contents only.
        let report = try store.prune(policy: RetentionPolicy(maxBytes: store.bytesOnDisk - (48 << 10)), now: now)
        #expect(report.versions == 1)
        #expect(try store.version(newer.id) == nil, "the copy went first, though newer")
        #expect(try store.latest(of: "f")?.id == latest.id, "the file's latest version stays")
    }

    @Test func aSchemaVersion2DatabaseIsUpgradedAndRecordsCopies() throws {
        let fixture = try HistoryFixture()
        let old = Array("from version two\n".utf8)
        try VersionStoreLineChangesTests.makeVersion1Database(at: fixture.path, holding: old)
        do {
            let database = try SQLiteDatabase(path: fixture.path)
            defer { database.close() }
            try database.execute(VersionStore.migrationFrom1)
        }
        #expect(try fixture.integer("PRAGMA user_version") == 2)

        let store = try fixture.open()
        #expect(try fixture.integer("PRAGMA user_version") == 3)
        #expect(try store.content(of: 1) == old, "the old version reads back")
        let made = try #require(try store.record(copy("mine\n", of: "notes.txt", from: "from version two\n")))
        #expect(made.parent == 1)
        store.close()
        #expect(try fixture.open().version(made.id)?.parent == 1, "the link is stored")
    }
}
