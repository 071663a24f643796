@testable import AutosaveKit
import AutosaveHistory
import AutosaveTestKit
import Foundation
import Testing

/// Property: whatever mix of client edits, saves and outside writes a folder sees, every content
/// a file held on disk at a quiet point (everything settled, history caught up) is one of that
/// file's versions in history, byte for byte. The class it kills: a version that was on disk,
/// seen by the agent, and is nowhere in history (a change swallowed as the agent's own, a
/// baseline that missed a file or landed on top, a save not recorded).
@Suite struct HistoryPropertyTests {
    /// What one step does.
    enum Step: CaseIterable {
        case clientWrite, clientWriteAndSave, outsideWriteInPlace, outsideReplace, outsideRemove, outsideCreate, outsideMove, quietPause
    }

    static let paths = ["a.txt", "b.txt", "d/c.txt", "d/e/f.txt"]

    /// `AUTOSAVE_PROPERTY_CASES=N` for more.
    @Test func everyContentOnDiskAtAQuietPointIsAVersionInHistory() async throws {
        let cases = ProcessInfo.processInfo.environment["AUTOSAVE_PROPERTY_CASES"].flatMap(Int.init) ?? 12
        for number in 0..<cases {
            try await check(seed: 0x4157_0000 + UInt64(number), steps: 30, settleMs: number.isMultiple(of: 2) ? 0 : 50)
        }
    }

    func check(seed: UInt64, steps: Int, settleMs: Int) async throws {
        var random = SplitMix64(seed: seed)
        let files = Dictionary(uniqueKeysWithValues: Self.paths.prefix(3).map { ($0, "start \($0)\n") })
        let harness = try await WorkspaceHarness(files: files, configure: { $0.watch.settleMs = settleMs })
        await harness.workspace.finishStartUp()
        _ = try await harness.logs.first(timeout: .seconds(60), "history-baseline done") {
            $0.event == "history-baseline" && $0.fields["state"] == "done"
        }
        let history = try #require(await harness.workspace.history)
        // Per path, every content seen on disk at a quiet point.
        var seen: [String: Set<[UInt8]>] = [:]
        var trail: [String] = []
        func quietPoint() async throws {
            await harness.settleExternalChanges()
            // A save in flight (a file removed under edits, written again from the buffer) has
            // put its bytes on disk before it hands them to history: quiet means it is done too.
            try await harness.waitForQuietBuffers()
            await harness.settleExternalChanges()
            await history.caughtUp()
            for path in Self.paths {
                if let bytes = FileManager.default.contents(atPath: harness.project.url(path)) { seen[path, default: []].insert(Array(bytes)) }
            }
        }
        try await quietPoint()
        for index in 0..<steps {
            let step = Step.allCases[Int(random.next() % UInt64(Step.allCases.count))]
            let path = Self.paths[Int(random.next() % UInt64(Self.paths.count))]
            let text = "\(index) \(random.next() % 1000)\n"
            trail.append("\(step) \(path)")
            switch step {
            case .clientWrite:
                _ = try? await harness.write(path, text)
            case .clientWriteAndSave:
                if (try? await harness.write(path, text)) != nil { try? await harness.workspace.save([path]) }
            case .outsideWriteInPlace:
                let handle = FileHandle(forWritingAtPath: harness.project.url(path))
                try handle?.truncate(atOffset: 0)
                try handle?.write(contentsOf: Data(text.utf8))
                try handle?.close()
            case .outsideReplace, .outsideCreate:
                // As `sed -i` and most editors write: a new file renamed over the name.
                try harness.project.write(path + ".tmp", text)
                try FileManager.default.createDirectory(
                    atPath: (harness.project.url(path) as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
                _ = rename(harness.project.url(path + ".tmp"), harness.project.url(path))
            case .outsideMove:
                let target = Self.paths[Int(random.next() % UInt64(Self.paths.count))]
                try FileManager.default.createDirectory(
                    atPath: (harness.project.url(target) as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
                _ = rename(harness.project.url(path), harness.project.url(target))
                trail[trail.count - 1] += " to \(target)"
            case .outsideRemove:
                try? FileManager.default.removeItem(atPath: harness.project.url(path))
            case .quietPause:
                try await quietPoint()
            }
            if random.next() % 3 == 0 { try await quietPoint() }
        }
        // Saves still due land, then the last quiet point.
        try await harness.advance(by: .milliseconds(harness.configuration.autosave.maxDelayMs + 100))
        try await quietPoint()
        for (path, contents) in seen.sorted(by: { $0.key < $1.key }) {
            // Every version recorded at the name, whichever file it belonged to (`versions(at:)`
            // follows one file back across the renames that `sed -i` and editors make).
            let recorded = try history.database.withStore { store throws(HistoryError) -> Set<[UInt8]> in
                var recorded = Set<[UInt8]>()
                for version in try store.versions(below: path) where version.path == path {
                    if let bytes = try store.content(of: version.id) { recorded.insert(bytes) }
                }
                return recorded
            }
            for content in contents where !recorded.contains(content) {
                Issue.record(
                    "seed \(seed), settleMs \(settleMs): \(path) held \(String(decoding: content, as: UTF8.self).debugDescription) at a quiet point, and history does not have it (it has \(recorded.map { String(decoding: $0, as: UTF8.self) }.sorted())); steps: \(trail)")
            }
        }
        await harness.stop()
    }
}
