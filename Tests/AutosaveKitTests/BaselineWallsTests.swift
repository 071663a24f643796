@testable import AutosaveKit
import AutosaveHistory
import AutosaveTestKit
import Foundation
import Synchronization
import Testing

/// The baseline reads a folder's files from one descriptor of the folder: the walls must hold for
/// the whole batch, not only when the folder was opened.
///
/// Class of bug: a descriptor opened inside the root outlives the name that led to it. A folder
/// moved out of the root (and changed out there), a folder or file swapped for a link to the
/// outside, between the pass's reads: every read after that goes through a stale descriptor.
/// Property: whatever is swapped in during the pass, no version in history holds a byte that was
/// outside the root when it was read.
@Suite struct BaselineWallsTests {
    /// Every file outside the root holds this; no version in history may.
    static let mark = "OUTSIDE"

    @Test(arguments: 0..<6) func nothingSwappedInDuringThePassLeadsHistoryOutOfTheRoot(seed: UInt64) async throws {
        let outside = try TemporaryDirectory()
        var files: [String: String] = [:]
        for folder in 0..<4 {
            try FileManager.default.createDirectory(atPath: outside.url("d\(folder)"), withIntermediateDirectories: true)
            for file in 0..<12 {
                files["d\(folder)/f\(file).txt"] = "inside d\(folder)/f\(file)\n"
                try outside.write("d\(folder)/f\(file).txt", "\(Self.mark) d\(folder)/f\(file)\n")
            }
        }
        try outside.write("secret.txt", "\(Self.mark) secret\n")
        let attacker = Mutex((random: SplitMix64(seed: 0x57A1_0000 + seed), moves: 0))
        let rootBox = Mutex<String?>(nil)
        let harness = try await WorkspaceHarness(
            files: files,
            afterBaselineRead: { path in
                guard let root = rootBox.withLock({ $0 }) else { return }
                attacker.withLock { state in Self.attack(after: path, root: root, outside: outside.path, &state.random, &state.moves) }
            })
        rootBox.withLock { $0 = harness.project.path }
        await harness.workspace.finishStartUp()
        let done = try await harness.logs.first(timeout: .seconds(60), "history-baseline done") {
            $0.event == "history-baseline" && ["done", "failed"].contains($0.fields["state"] ?? "")
        }
        await harness.settleExternalChanges()
        let history = try #require(await harness.workspace.history)
        await history.caughtUp()
        for version in (try? await history.versions(at: "")) ?? [] {
            let content = try await history.content(of: version.path, at: .id(version.id)).content ?? []
            #expect(
                !String(decoding: content, as: UTF8.self).contains(Self.mark),
                "seed \(seed): version \(version.id) of \(version.path) (\(version.kind)) holds bytes from outside the root")
        }
        #expect(done.fields["state"] == "done", "\(done)")
        #expect(attacker.withLock { $0.moves } > 0, "seed \(seed): the attacker moved something during the pass")
        await harness.stop()
    }

    /// One of an attacker's moves after the pass read `path`, now and then: the file's folder
    /// moved out of the root and changed there, with a link to an outside folder in its place;
    /// or a file of that folder swapped for a link to an outside file.
    static func attack(after path: String, root: String, outside: String, _ random: inout SplitMix64, _ moves: inout Int) {
        guard random.below(4) == 0 else { return }
        let folder = String(path.split(separator: "/").first ?? "")
        let manager = FileManager.default
        moves += 1
        switch random.below(2) {
        case 0:
            // Out of the root with its files; changed out there; a link to the outside in its place.
            let away = outside + "/moved-\(folder)-\(moves)"
            guard rename(root + "/" + folder, away) == 0 else { return }
            for name in (try? manager.contentsOfDirectory(atPath: away)) ?? [] {
                try? "\(mark) \(folder)/\(name) changed outside\n".write(toFile: away + "/" + name, atomically: false, encoding: .utf8)
            }
            try? manager.createSymbolicLink(atPath: root + "/" + folder, withDestinationPath: outside + "/" + folder)
        default:
            // A file not read yet, swapped for a link to an outside file.
            let victim = root + "/" + folder + "/f\(random.below(12)).txt"
            let temporary = victim + ".swap"
            guard (try? manager.createSymbolicLink(atPath: temporary, withDestinationPath: outside + "/secret.txt")) != nil else { return }
            rename(temporary, victim)
        }
    }
}
