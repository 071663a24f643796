import AutosaveTestKit
import Testing

@testable import AutosaveHistory

/// A chain's inner frames are decoded through two reused buffers and not checked one by one:
/// every version still reads back byte for byte whatever its chain holds, a wrong inner frame
/// still fails the read, and the buffers do not keep a large file's size for good.
@Suite struct VersionStoreChainTests {
    @Test func contentsThatGrowAndShrinkAlongTheChainReadBackExactlyInAnyOrder() throws {
        let fixture = try HistoryFixture()
        var store = try fixture.open()
        var random = SplitMix64(seed: 41)
        var content = text(lines: 2_000, seed: 42)
        var recorded: [(id: Int64, bytes: [UInt8])] = []
        for index in 0..<60 {
            // Whole blocks added and cut, so that a base is now larger, now smaller than the
            // content decoded against it, and the buffers must grow between two frames.
            switch index % 4 {
            case 0: content += text(lines: 1 + random.below(6_000), seed: random.next())
            case 1: content.removeLast(random.below(content.count / 2 + 1))
            case 2: content.insert(contentsOf: line(index, &random), at: 64 * random.below(content.count / 64 + 1))
            default: content = Array(content.prefix(64 * (1 + random.below(200))))
            }
            let version = try #require(
                try store.record(VersionInput(path: "f.txt", content: content, kind: .saved, who: "cli", time: 1)))
            recorded.append((version.id, content))
        }
        #expect(try fixture.integer("SELECT max(depth) FROM contents") >= 10, "long chains, not keyframes")
        store.close()
        // From an empty cache, in an order where neighbours rarely follow each other.
        store = try fixture.open()
        for index in (0..<recorded.count).map({ ($0 * 37) % recorded.count }) {
            #expect(try store.content(of: recorded[index].id) == recorded[index].bytes, "version \(recorded[index].id)")
            #expect(store.chainBuffers.bytes <= store.chainBuffers.keptBytes)
        }
    }

    @Test func aWrongInnerFrameFailsTheReadInsteadOfGivingOtherBytes() throws {
        let fixture = try HistoryFixture()
        var store = try fixture.open()
        // Random bytes: each delta refers to its base for nearly all of its bytes.
        let first = randomBytes(10_000, seed: 61)
        var contents = [first]
        for index in 1..<4 {
            var next = contents[index - 1]
            next[index * 1_000] ^= 0xFF
            contents.append(next)
        }
        var ids: [Int64] = []
        for bytes in contents {
            ids.append(try #require(try store.record(VersionInput(path: "a.txt", content: bytes, kind: .saved, who: "cli", time: 1))).id)
        }
        store.close()
        // The keyframe replaced by a sound frame of other bytes of the same size: it decodes,
        // its own checksum matches, and only what is built on it can tell.
        let other = randomBytes(10_000, seed: 62)
        let database = try SQLiteDatabase(path: fixture.path)
        let update = try database.prepare("UPDATE contents SET data = ? WHERE base IS NULL")
        try update.bind(try Zstd.compress(other, prefix: nil), at: 1)
        try update.run()
        database.close()

        store = try fixture.open()
        for id in ids.reversed() {
            let error = historyError { () throws(HistoryError) in _ = try store.content(of: id) }
            guard case .compression = error else {
                Issue.record("version \(id) on a wrong keyframe: a compression error, not \(String(describing: error))")
                continue
            }
        }
    }

    @Test func buffersLargerThanTheirBudgetAreFreedAfterTheRead() throws {
        let fixture = try HistoryFixture()
        var store = try fixture.open()
        var content = text(lines: 3 * 16_384, seed: 51)
        var random = SplitMix64(seed: 52)
        var last: (id: Int64, bytes: [UInt8])?
        for index in 0..<3 {
            content.replaceSubrange((index * 64)..<(index * 64 + 64), with: line(index, &random))
            let version = try #require(
                try store.record(VersionInput(path: "big.txt", content: content, kind: .saved, who: "cli", time: 1)))
            last = (version.id, content)
        }
        store.close()
        store = try fixture.open()
        let wanted = try #require(last)
        #expect(try store.content(of: wanted.id) == wanted.bytes)
        #expect(store.chainBuffers.bytes == 0, "two buffers of 3 MiB are over the 4 MiB kept")
    }
}
