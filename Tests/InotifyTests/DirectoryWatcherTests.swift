import AutosaveTestKit
import Foundation
@testable import Inotify
import Testing

/// A started watcher on a temp project, its events recorded.
struct WatchedProject {
    let directory: TemporaryDirectory
    let watcher: DirectoryWatcher
    let events = AsyncRecorder<WatchEvent>()
    let scan: DirectoryScan

    /// - Parameter ignoresStateDirectory: whether a rule ignores `.state`, where the cookies are;
    ///   without one, only the watcher's own knowledge of its cookie directory leaves it out.
    init(
        files: [String: String] = [:], ignoresStateDirectory: Bool = true,
        ignoring ignored: @escaping @Sendable (String, Bool) -> Bool = { _, _ in false }, probeBatch: Int? = nil
    ) async throws {
        directory = try TemporaryDirectory()
        for (path, content) in files { try directory.write(path, content) }
        let cookies = directory.path + "/.state/cookies"
        let isIgnored: @Sendable (String, String, Bool) -> Bool = { parent, name, isDirectory in
            let path = parent.isEmpty ? name : parent + "/" + name
            return (ignoresStateDirectory && path == ".state") || ignored(path, isDirectory)
        }
        if let probeBatch {
            watcher = DirectoryWatcher(root: directory.path, cookieDirectory: cookies, isIgnored: isIgnored, probeBatch: probeBatch)
        } else {
            watcher = DirectoryWatcher(root: directory.path, cookieDirectory: cookies, isIgnored: isIgnored)
        }
        scan = try await watcher.start()
        events.record(watcher.events)
    }

    /// Waits until every event caused before this call has been recorded.
    func sync() async throws {
        let number = watcher.requestBarrier()
        _ = try await events.first(timeout: .seconds(20), "barrier \(number)") { $0 == .barrier(number) }
    }

    /// File events recorded so far, as "kind path".
    func fileEvents() -> [String] {
        events.elements.compactMap {
            guard case .file(let event) = $0 else { return nil }
            return "\(event.kind) \(event.path)"
        }
    }
}

@Suite struct DirectoryWatcherTests {
    @Test func firstScanListsFilesAndWatchesOnlyDirectories() async throws {
        let project = try await WatchedProject(files: [
            "a.txt": "a", "src/b.txt": "b", "src/deep/c.txt": "c", "build/out.o": "o",
        ])
        #expect(Set(project.scan.files.map(\.path)) == ["a.txt", "src/b.txt", "src/deep/c.txt", "build/out.o"])
        #expect(project.scan.directories == 4)
        #expect(project.scan.watches == 4)
        await project.watcher.stop()
    }

    /// A level bigger than a probe batch is probed in batches, one taken into the tree while the
    /// next is probed: every directory of every batch is watched, its files listed, the ignore
    /// rules applied by the probe threads.
    @Test func aLevelOfSeveralProbeBatchesIsWatchedAndListedWhole() async throws {
        // Batches of 1,000 rather than the agent's 8,192: 16,000 directories made at once slowed
        // every test running beside this one past its timeouts.
        let probeBatch = 1_000
        let count = probeBatch * 2 + 100
        var files: [String: String] = [:]
        for index in 0..<count {
            files["d\(index)/f.txt"] = "\(index)"
            if index % 1000 == 0 { files["d\(index)/f.tmp"] = "ignored" }
        }
        let project = try await WatchedProject(
            files: files, ignoring: { path, isDirectory in !isDirectory && path.hasSuffix(".tmp") }, probeBatch: probeBatch)
        #expect(project.scan.directories == count + 1)
        #expect(project.scan.watches == count + 1)
        #expect(Set(project.scan.files.map(\.path)) == Set((0..<count).map { "d\($0)/f.txt" }))
        try project.directory.write("d\(count - 1)/new.txt", "n")
        try await project.sync()
        #expect(project.fileEvents().contains("created d\(count - 1)/new.txt"))
        await project.watcher.stop()
    }

    /// The cookie directory may lie inside the tree (the agent's state dir holds it) where no
    /// rule ignores it: the watcher still leaves it out, or every barrier would be a file event.
    @Test func aCookieDirectoryInsideTheTreeIsLeftOutWithoutARule() async throws {
        let project = try await WatchedProject(files: [".state/keep.txt": "k"], ignoresStateDirectory: false)
        #expect(project.scan.directories == 2, "the root and .state/, not .state/cookies")
        #expect(project.scan.files.map(\.path) == [".state/keep.txt"])
        for _ in 0..<3 { try await project.sync() }
        #expect(project.fileEvents().isEmpty, "no cookie is reported as a file: \(project.fileEvents())")
        await project.watcher.stop()
    }

    @Test func ignoredDirectoriesAreNeitherWatchedNorListed() async throws {
        let project = try await WatchedProject(
            files: ["build/out.o": "o", "src/b.txt": "b"],
            ignoring: { path, isDirectory in isDirectory && path == "build" })
        #expect(project.scan.files.map(\.path) == ["src/b.txt"])
        #expect(project.scan.watches == 2)
        try project.directory.write("build/new.o", "n")
        try project.directory.write("src/b.txt", "bb")
        try await project.sync()
        #expect(project.fileEvents().allSatisfy { $0.hasSuffix("src/b.txt") })
        #expect(!project.fileEvents().isEmpty)
        await project.watcher.stop()
    }

    @Test func deepDirectoryRenameIsFollowedByEveryPathBelow() async throws {
        let deep = (1...9).map { "d\($0)" }.joined(separator: "/")
        let project = try await WatchedProject(files: ["a1/\(deep)/leaf.txt": "x"])
        try project.directory.rename("a1", "b1")
        try project.directory.write("b1/\(deep)/leaf.txt", "y")
        try await project.sync()
        let events = project.events.elements
        #expect(events.contains(.directoryMoved(from: "a1", to: "b1")))
        #expect(project.fileEvents().contains("modified b1/\(deep)/leaf.txt"))
        #expect(!project.fileEvents().contains { $0.contains("a1/") })
        await project.watcher.stop()
    }

    @Test func newDirectoryIsWatchedBeforeItIsListed() async throws {
        let project = try await WatchedProject()
        for round in 0..<20 {
            try project.directory.write("n\(round)/b/c/f.txt", "x")
        }
        try await project.sync()
        let events = project.events.elements
        for round in 0..<20 {
            let path = "n\(round)/b/c/f.txt"
            let seen = events.contains { event in
                switch event {
                case .directoryAppeared(_, let files): files.contains(path)
                case .file(let file): file.path == path
                default: false
                }
            }
            #expect(seen, "\(path) was neither listed nor reported")
        }
        // Everything below is watched: a later write deep inside is reported.
        try project.directory.write("n7/b/c/f.txt", "again")
        try await project.sync()
        #expect(project.fileEvents().contains("modified n7/b/c/f.txt"))
        await project.watcher.stop()
    }

    /// Every tree of the process shares the watcher thread and its one inotify instance, which
    /// knows each watch's tree by the tree's number: a tree that stops lets its number go, and
    /// the trees started before and after it keep theirs.
    @Test func whenOneTreeStopsTheTreesBesideItKeepReporting() async throws {
        let before = try await WatchedProject(files: ["d/a.txt": "a"])
        let stopping = try await WatchedProject(files: ["d/b.txt": "b"])
        let after = try await WatchedProject(files: ["d/c.txt": "c"])
        await stopping.watcher.stop()
        try before.directory.write("d/a.txt", "changed")
        try after.directory.write("d/c.txt", "changed")
        try await before.sync()
        try await after.sync()
        #expect(before.fileEvents().contains("modified d/a.txt"))
        #expect(after.fileEvents().contains("modified d/c.txt"))
        await before.watcher.stop()
        await after.watcher.stop()
    }

    @Test func directoryMovedOutIsForgotten() async throws {
        let outside = try TemporaryDirectory()
        let project = try await WatchedProject(files: ["gone/sub/f.txt": "x"])
        try project.directory.rename("gone", outside.path + "/gone")
        try await project.sync()
        #expect(project.events.elements.contains(.directoryRemoved(path: "gone")))
        let before = project.events.elements.count
        try outside.write("gone/sub/f.txt", "changed outside")
        try await project.sync()
        let after = project.events.elements.dropFirst(before)
        let named = after.filter { if case .barrier = $0 { false } else { true } }
        #expect(named.isEmpty, "events after the move out: \(named)")
        await project.watcher.stop()
    }

    @Test func directoryMovedInIsListedAndWatched() async throws {
        let outside = try TemporaryDirectory()
        try outside.write("incoming/x/y.txt", "y")
        let project = try await WatchedProject()
        try FileManager.default.moveItem(atPath: outside.url("incoming"), toPath: project.directory.url("incoming"))
        try await project.sync()
        #expect(project.events.elements.contains(.directoryAppeared(path: "incoming", files: ["incoming/x/y.txt"])))
        try project.directory.write("incoming/x/y.txt", "z")
        try await project.sync()
        #expect(project.fileEvents().contains("modified incoming/x/y.txt"))
        await project.watcher.stop()
    }

    @Test func deletedAndRecreatedDirectoryIsWatchedAgain() async throws {
        let project = try await WatchedProject(files: ["d/f.txt": "x"])
        try project.directory.remove("d")
        try project.directory.makeDirectory("d")
        try await project.sync()
        try project.directory.write("d/g.txt", "new")
        try await project.sync()
        let events = project.events.elements
        #expect(events.contains(.directoryRemoved(path: "d")))
        #expect(project.fileEvents().contains("created d/g.txt"))
        await project.watcher.stop()
    }

    @Test func renameFromAnIgnoredTempNameKeepsItsSource() async throws {
        let project = try await WatchedProject(files: ["f.txt": "old"], ignoring: { path, _ in path.hasSuffix(".tmp") })
        try project.directory.write("f.txt.tmp", "new")
        try project.directory.rename("f.txt.tmp", "f.txt")
        try await project.sync()
        let moved = project.events.elements.compactMap { event -> FileEvent? in
            if case .file(let file) = event, file.kind == .movedTo { return file }
            return nil
        }
        #expect(moved.map(\.path) == ["f.txt"])
        #expect(moved.first?.renamedFromIgnored == "f.txt.tmp")
        #expect(project.fileEvents().allSatisfy { !$0.contains(".tmp") })
        await project.watcher.stop()
    }

    /// A directory's subdirectories are found by name whatever order they come and go in: of
    /// many siblings, the ones removed and made again (some sorting before the rest, some after,
    /// some between) are each watched anew, and the ones left alone are still watched.
    @Test func siblingsRemovedAndMadeAgainInAnyOrderAreEachWatched() async throws {
        let names = (0..<40).map { "s\(($0 * 17) % 40)" } + ["A", "zz", "s10x", "é"]
        let project = try await WatchedProject(files: Dictionary(uniqueKeysWithValues: names.map { ("p/\($0)/f.txt", "x") }))
        let removed = names.enumerated().filter { $0.offset % 3 == 0 }.map(\.element)
        for name in removed { try project.directory.remove("p/\(name)") }
        try await project.sync()
        for name in removed.reversed() { try project.directory.makeDirectory("p/\(name)") }
        try await project.sync()
        for name in names { try project.directory.write("p/\(name)/g.txt", "new") }
        try await project.sync()
        let created = Set(project.fileEvents())
        for name in names { #expect(created.contains("created p/\(name)/g.txt"), "p/\(name) is not watched") }
        for name in removed { #expect(project.events.elements.contains(.directoryRemoved(path: "p/\(name)"))) }
        await project.watcher.stop()
    }
}

/// Ignored names are news only for whoever asks what changed (git): a file a rule ignores,
/// written over and over (a busy log), is reported once between barriers, not once per write,
/// and again after each barrier.
@Suite struct IgnoredChangeTests {
    @Test func aBusyIgnoredFileIsReportedOncePerBarrier() async throws {
        let project = try await WatchedProject(ignoring: { path, _ in path.hasSuffix(".log") })
        let log = project.directory.url("busy.log")
        for line in 0..<50 { try Data("line \(line)\n".utf8).write(to: URL(fileURLWithPath: log)) }
        try await project.sync()
        func reports() -> Int {
            project.events.elements.count { if case .ignoredChanged("busy.log", false) = $0 { true } else { false } }
        }
        #expect(reports() == 1)
        try Data("after the barrier\n".utf8).write(to: URL(fileURLWithPath: log))
        try await project.sync()
        #expect(reports() == 2, "a write after a barrier is news again")
        #expect(project.fileEvents().isEmpty, "an ignored file is never a file event")
        await project.watcher.stop()
    }
}
