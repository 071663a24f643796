import AutosaveTestKit
import Foundation
import Testing

@testable import AutosaveHistory

/// Random sequences of versions (edits of the previous content, repeats, removals, moves,
/// restores, conflict copies, large files, restarts) against a model that keeps every content as
/// it is: every version reads back byte for byte, and every path's history, the deleted files
/// and a folder's history are the model's. Some sequences force digest collisions, some keep
/// chains short, so that sharing and keyframes are exercised as often as plain deltas.
@Suite struct VersionStorePropertyTests {
    /// What the store should hold, kept the simplest way: every version with its bytes.
    struct Model {
        struct Entry {
            var id: Int64
            var path: String
            var kind: VersionKind
            var content: [UInt8]?
            var from: String?
            var parent: Int64?
            var time: Int64
        }

        var entries: [Entry] = []

        /// What the file at `path` last held: a conflict copy never was the file.
        func latest(_ path: String) -> Entry? { entries.last { $0.path == path && $0.kind != .conflictCopy } }

        /// The version a conflict copy of `path` that came from `bytes` is linked to.
        func parent(of path: String, bytes: [UInt8]?) -> Int64? {
            guard let bytes else { return nil }
            return entries.last {
                $0.path == path && $0.content == bytes && $0.kind != .conflictCopy && $0.kind != .removed
            }?.id
        }

        /// The content a version recorded from `input` has, or nil for `repeat` when it is none.
        func outcome(of input: VersionInput) -> (isRepeat: Bool, content: [UInt8]?) {
            let latest = latest(input.path)
            if let bytes = input.content {
                let isRepeat =
                    [.saved, .modified, .created, .baseline].contains(input.kind) && latest != nil
                    && latest?.kind != .removed && latest?.content == bytes
                return (isRepeat, bytes)
            }
            if input.kind == .removed { return (false, latest?.content) }
            if input.kind == .moved, let from = input.from { return (false, self.latest(from)?.content) }
            return (false, nil)
        }

        /// The file's versions newest first, following it back across moves.
        func history(of path: String) -> [Int64] {
            var name = path
            var ids: [Int64] = []
            for entry in entries.reversed() where entry.path == name {
                ids.append(entry.id)
                if entry.kind == .moved, let from = entry.from { name = from }
            }
            return ids
        }

        func deleted() -> [Int64] {
            Set(entries.map(\.path)).compactMap { latest($0) }.filter { $0.kind == .removed }.map(\.id).sorted(by: >)
        }

        func below(_ folder: String) -> [Int64] {
            entries.filter { $0.path == folder || $0.path.hasPrefix(folder + "/") }.map(\.id).reversed()
        }
    }

    static let paths = ["a", "b", "d/c", "d/e", "dd", "d.txt"]

    @Test func everyVersionReadsBackAndEveryHistoryIsTheModels() throws {
        let cases = ProcessInfo.processInfo.environment["AUTOSAVE_PROPERTY_CASES"].flatMap(Int.init) ?? 30
        for index in 0..<cases {
            try run(seed: 0x6869_7374 &+ UInt64(index))
        }
    }

    func run(seed: UInt64) throws {
        var random = SplitMix64(seed: seed)
        let fixture = try HistoryFixture()
        let interval = [1, 2, 3, 5, 64][random.below(5)]
        let collides = random.below(3) == 0
        func open() throws -> VersionStore {
            if collides {
                return try VersionStore(
                    path: fixture.path, keyframeInterval: interval, faultInjectionHash: { UInt64($0.count % 4) })
            }
            return try VersionStore(path: fixture.path, keyframeInterval: interval)
        }
        var store = try open()
        var model = Model()
        let label = "seed \(seed) (interval \(interval)\(collides ? ", colliding digests" : ""))"
        for step in 0..<(30 + random.below(40)) {
            let path = Self.paths[random.below(Self.paths.count)]
            let previous = model.latest(path)?.content ?? []
            // Now and then a time earlier than the one before (a clock set back): a file's version at
            // a moment is the newest recorded at or before it, not the one with the latest time.
            let time = random.below(8) == 0 ? Int64(random.below(step + 1)) : Int64(step)
            var version = VersionInput(path: path, content: nil, kind: .saved, who: "cli", time: time)
            let choice = random.below(100)
            switch choice {
            case 0..<45:
                version.content = Self.edit(previous, &random)
                version.kind = [.saved, .modified, .created, .baseline][random.below(4)]
            case 45..<55:
                version.content = previous
                version.kind = [.saved, .modified, .created, .baseline][random.below(4)]
            case 55..<65:
                version.kind = .removed
                version.content = random.below(5) == 0 ? previous : nil
            case 65..<75:
                let from = Self.paths[random.below(Self.paths.count)]
                version.kind = .moved
                version.from = from
                version.content = random.below(3) == 0 ? model.latest(from)?.content : nil
            case 75..<83:
                let earlier = model.entries.compactMap(\.content)
                version.kind = .restored
                version.who = "restore"
                version.content = earlier.isEmpty ? [] : earlier[random.below(earlier.count)]
            case 83..<88:
                version.kind = .conflictCopy
                version.from = path + ".conflict"
                version.content = Self.edit(previous, &random)
                // The buffer's base (the file's latest), or an older version, or bytes history never had.
                let earlier = model.entries.filter { $0.path == path }.compactMap(\.content)
                version.parentContent = [previous, earlier.isEmpty ? [] : earlier[random.below(earlier.count)], [7, 7]][random.below(3)]
            case 88..<95:
                version.kind = .modified
                version.who = "external"
                version.content = text(lines: 300 + random.below(800), seed: random.next())
            default:
                store.close()
                store = try open()
                continue
            }
            let expected = model.outcome(of: version)
            let recorded = try store.record(version)
            if expected.isRepeat {
                #expect(recorded == nil, "\(label), step \(step): a repeat of \(path)'s latest content")
                continue
            }
            let made = try #require(recorded, "\(label), step \(step): \(version.kind) of \(path)")
            #expect(made.id > (model.entries.last?.id ?? 0))
            #expect(made.size == expected.content?.count, "\(label), step \(step)")
            #expect(made.digest == expected.content.map(store.hash), "\(label), step \(step)")
            let parent = version.kind == .conflictCopy ? model.parent(of: path, bytes: version.parentContent) : nil
            #expect(made.parent == parent, "\(label), step \(step): the copy's parent")
            model.entries.append(
                .init(
                    id: made.id, path: path, kind: version.kind, content: expected.content, from: version.from,
                    parent: parent, time: version.time))
        }

        for entry in model.entries {
            #expect(try store.content(of: entry.id) == entry.content, "\(label): content of version \(entry.id)")
            let version = try #require(try store.version(entry.id))
            #expect(
                version.path == entry.path && version.kind == entry.kind && version.from == entry.from
                    && version.parent == entry.parent, "\(label)")
        }
        for path in Self.paths {
            #expect(try store.versions(of: path).map(\.id) == model.history(of: path), "\(label): history of \(path)")
            #expect(try store.latest(of: path)?.id == model.latest(path)?.id, "\(label): latest of \(path)")
            try expectPicks(of: path, in: store, as: model, label)
        }
        #expect(try store.deleted(below: "").map(\.id) == model.deleted(), "\(label): deleted")
        #expect(try store.versions(below: "d").map(\.id) == model.below("d"), "\(label): below d")
        #expect(
            try store.versions(below: "").map(\.id) == Array(model.entries.map(\.id).reversed()), "\(label): everything"
        )
    }

    /// One version of `path` picked by id, by place and by time is the one the model's history
    /// of it holds there, and none is picked where it holds none. A place or a time counts only
    /// what the file held: conflict copies are picked by id alone.
    func expectPicks(of path: String, in store: VersionStore, as model: Model, _ label: String) throws {
        let history = model.history(of: path)
        for entry in model.entries {
            let expected = history.contains(entry.id) ? entry.id : nil
            #expect(try store.version(of: path, id: entry.id)?.id == expected, "\(label): \(path)@\(entry.id)")
        }
        let entries = Dictionary(uniqueKeysWithValues: model.entries.map { ($0.id, $0) })
        let held = history.filter { entries[$0]?.kind != .conflictCopy }
        for count in 0...held.count {
            let expected = count < held.count ? held[count] : nil
            #expect(try store.version(of: path, back: count)?.id == expected, "\(label): \(path)@-\(count)")
        }
        // Times are the steps: every one, and one before the first and after the last.
        for moment in Int64(-1)...((model.entries.map(\.time).max() ?? 0) + 1) {
            let expected = held.first { (entries[$0]?.time ?? .max) <= moment }
            #expect(try store.version(of: path, atOrBefore: moment)?.id == expected, "\(label): \(path) at \(moment)")
        }
    }

    /// A random edit of `bytes`: an insertion, a deletion or a replacement (random bytes, NULs
    /// included), sometimes everything gone.
    static func edit(_ bytes: [UInt8], _ random: inout SplitMix64) -> [UInt8] {
        var bytes = bytes
        let start = random.below(bytes.count + 1)
        let end = min(bytes.count, start + random.below(200))
        let inserted = (0..<random.below(120)).map { _ in
            UInt8(truncatingIfNeeded: random.next() % 7 == 0 ? 0 : random.next())
        }
        switch random.below(20) {
        case 0: bytes = []
        case 1..<7: bytes.insert(contentsOf: inserted, at: start)
        case 7..<12: bytes.removeSubrange(start..<end)
        default: bytes.replaceSubrange(start..<end, with: inserted)
        }
        return bytes
    }
}
