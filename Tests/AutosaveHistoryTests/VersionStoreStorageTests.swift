import AutosaveTestKit
import Testing

@testable import AutosaveHistory

/// How versions are stored, as far as a user notices it: a version costs about its change, a
/// restore decodes a bounded chain, and two contents are never confused, even when their digests
/// collide or a stored frame is damaged.
@Suite struct VersionStoreStorageTests {
    /// The class: a chain that, once full, went back to a fixed ancestor, so every later delta
    /// carried all the changes since it (at 1,000 versions the average delta was 90 times a
    /// one-line delta, and growing). Property: however many versions, chains stay short and the
    /// average delta stays near one change's.
    @Test func aThousandVersionsKeepChainsShortAndDeltasNearOneChange() throws {
        let fixture = try HistoryFixture()
        let store = try fixture.open(keyframeInterval: 64)
        var content = text(lines: 4_096, seed: 21)
        var random = SplitMix64(seed: 22)
        var ids: [(id: Int64, content: [UInt8])] = []
        for index in 0..<1_000 {
            let number = random.below(4_096)
            content.replaceSubrange((number * 64)..<(number * 64 + 64), with: line(2_000_000 + index, &random))
            let version = try #require(
                try store.record(VersionInput(path: "f.txt", content: content, kind: .saved, who: "cli", time: Int64(index))))
            if index.isMultiple(of: 97) { ids.append((version.id, content)) }
        }
        let deepest = try fixture.integer("SELECT max(depth) FROM contents")
        #expect(deepest <= 16 + 7, "a version, then its hub, then hubs as skip-deltas: \(deepest) frames")
        let deltas = try fixture.integer("SELECT sum(length(data)) FROM contents WHERE base IS NOT NULL")
        let median = try fixture.integer(
            "SELECT length(data) FROM contents WHERE base IS NOT NULL ORDER BY length(data) LIMIT 1 OFFSET 500")
        #expect(deltas < 999 * median * 3, "average delta \(deltas / 999) bytes, a one-change delta \(median)")
        for (id, expected) in ids { #expect(try store.content(of: id) == expected) }
    }

    /// 200 versions of a 1 MiB text, each one line different from the one before.
    @Test func twoHundredVersionsOfAMebibyteCostAboutTheirChangesAndAllReadBackExactly() throws {
        let fixture = try HistoryFixture()
        let interval = 64
        var store = try fixture.open(keyframeInterval: interval)
        let first = text(lines: 16_384, seed: 11)
        #expect(first.count == 1 << 20)
        var content = first
        var random = SplitMix64(seed: 12)
        var edits: [(id: Int64, line: Int, bytes: [UInt8])] = []
        for index in 0..<200 {
            let number = index == 0 ? 0 : random.below(16_384)
            let replacement = index == 0 ? Array(content[0..<64]) : line(1_000_000 + index, &random)
            content.replaceSubrange((number * 64)..<(number * 64 + 64), with: replacement)
            let version = try #require(
                try store.record(
                    VersionInput(path: "big.txt", content: content, kind: .saved, who: "cli", time: Int64(index))))
            edits.append((version.id, number, replacement))
        }
        let one = try Zstd.compress(first, prefix: nil).count
        // Closed, the WAL is folded into the main file: what the store is, not what it last wrote.
        store.close()
        store = try fixture.open(keyframeInterval: interval)
        let size = store.bytesOnDisk
        let keyframes = (200 + interval - 1) / interval
        #expect(
            size < Int64((keyframes + 1) * one + 200 * 4_096),
            "\(size) bytes for 200 versions; one version alone is \(one)")
        #expect(size * 20 < Int64(200 * one), "far below 200 versions each compressed alone")

        var expected = first
        for edit in edits {
            expected.replaceSubrange((edit.line * 64)..<(edit.line * 64 + 64), with: edit.bytes)
            #expect(try store.content(of: edit.id) == expected, "version \(edit.id)")
        }
        // Newest first as well, so that chains are decoded from their keyframes, not from the cache.
        store.close()
        store = try fixture.open(keyframeInterval: interval)
        #expect(try store.content(of: edits[199].id) == expected)
        #expect(try store.content(of: edits[100].id)?.count == 1 << 20)
    }

    @Test func aChainNeverReachesTheKeyframeInterval() throws {
        let fixture = try HistoryFixture()
        let store = try fixture.open(keyframeInterval: 8)
        var content = text(lines: 1_024, seed: 21)
        var random = SplitMix64(seed: 22)
        var recorded: [(Int64, [UInt8])] = []
        for index in 0..<50 {
            let number = random.below(1_024)
            content.replaceSubrange((number * 64)..<(number * 64 + 64), with: line(2_000_000 + index, &random))
            // Two files, taking turns, so that a chain's base is not always the content just stored.
            let path = index % 3 == 0 ? "other.txt" : "main.txt"
            let version = try #require(
                try store.record(VersionInput(path: path, content: content, kind: .saved, who: "cli", time: 1)))
            recorded.append((version.id, content))
        }
        #expect(try fixture.integer("SELECT max(depth) FROM contents") == 7)
        // A full chain goes back half way up itself, not to a new keyframe: one keyframe per file.
        #expect(try fixture.integer("SELECT count(*) FROM contents WHERE base IS NULL") == 2)
        // Every chain, walked from each content down its bases to a keyframe, is at most 8 frames.
        let longest = try fixture.integer(
            """
            WITH RECURSIVE chain(start, id, frames) AS (
                SELECT id, id, 1 FROM contents
                UNION ALL SELECT chain.start, contents.base, chain.frames + 1
                FROM chain JOIN contents ON contents.id = chain.id WHERE contents.base IS NOT NULL
            ) SELECT max(frames) FROM chain
            """)
        #expect(longest == 8)
        #expect(
            try fixture.integer(
                "SELECT count(*) FROM contents AS c JOIN contents AS b ON b.id = c.base WHERE c.depth != b.depth + 1")
                == 0)
        for (id, bytes) in recorded {
            #expect(try store.content(of: id) == bytes)
        }
    }

    @Test func aForcedDigestCollisionNeverMergesTwoContents() throws {
        let fixture = try HistoryFixture()
        // Every content has the same digest: only the bytes can tell them apart.
        let store = try VersionStore(path: fixture.path, keyframeInterval: 4, faultInjectionHash: { _ in 42 })
        let contents = ["alpha", "bravo", "charl", "delta", "alpha"].map { Array($0.utf8) }
        var recorded: [(Int64, [UInt8])] = []
        for (index, bytes) in contents.enumerated() {
            let path = index % 2 == 0 ? "a.txt" : "b.txt"
            let version = try #require(
                try store.record(VersionInput(path: path, content: bytes, kind: .saved, who: "cli", time: 1)))
            #expect(version.digest == 42)
            recorded.append((version.id, bytes))
        }
        for (id, bytes) in recorded {
            #expect(
                try store.content(of: id).map { String(decoding: $0, as: UTF8.self) }
                    == String(decoding: bytes, as: UTF8.self))
        }
        #expect(
            try fixture.integer("SELECT count(*) FROM contents") == 4,
            "four different contents; the second alpha shared")
        // A repeat is recognised by its bytes too, not by a digest every content has.
        #expect(
            try store.record(
                VersionInput(path: "b.txt", content: Array("delta".utf8), kind: .modified, who: "external", time: 2))
                == nil)
        let changed = try #require(
            try store.record(
                VersionInput(path: "b.txt", content: Array("echo!".utf8), kind: .modified, who: "external", time: 3)))
        #expect(try store.content(of: changed.id) == Array("echo!".utf8))
    }

    @Test func aDamagedFrameFailsToReadInsteadOfGivingOtherBytes() throws {
        let fixture = try HistoryFixture()
        var store = try fixture.open()
        let bytes = randomBytes(200_000, seed: 5)
        let version = try #require(
            try store.record(VersionInput(path: "a.bin", content: bytes, kind: .saved, who: "cli", time: 1)))
        store.close()
        // Flip one byte in the middle of the stored frame (random bytes stay their size compressed,
        // so the frame is found in the file as it was stored).
        let database = try SQLiteDatabase(path: fixture.path)
        let frame = try #require(
            try database.prepare("SELECT data FROM contents").firstRow { (row: SQLiteStatement) throws(SQLiteError) in
                row.blob(at: 0)
            })
        database.close()
        var file = try readFile(fixture.path)
        // The blob is split across overflow pages: look for a run of it that one page holds.
        let offset = try #require(
            stride(from: 100_000, to: 150_000, by: 1_000).lazy.compactMap { start in
                firstIndex(of: Array(frame[start..<(start + 64)]), in: file)
            }.first)
        file[offset + 10] ^= 0xFF
        try TemporaryDirectory.writeFile(fixture.path, file)

        store = try fixture.open()
        let error = historyError { () throws(HistoryError) in _ = try store.content(of: version.id) }
        guard case .compression = error else {
            Issue.record("a damaged frame is a compression error, not \(String(describing: error))")
            return
        }
    }
}

/// The index of the first occurrence of `needle` in `haystack`.
func firstIndex(of needle: [UInt8], in haystack: [UInt8]) -> Int? {
    guard let first = needle.first, haystack.count >= needle.count else { return nil }
    var index = 0
    while index <= haystack.count - needle.count {
        if haystack[index] == first, haystack[index..<(index + needle.count)].elementsEqual(needle) { return index }
        index += 1
    }
    return nil
}
