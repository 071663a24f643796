@testable import AutosaveKit
import AutosaveTestKit
import Foundation
import Testing

/// What the watcher's record of changes tells a client asking "what changed since?", on the
/// real kernel: the shape of the answer where the tree changed in bulk, and which names only
/// git hears of.
@Suite struct ChangesSinceTests {
    /// A language server watching `**/*.py` is told of each file a folder's move took along, not
    /// of the folder alone (which its glob does not match).
    @Test func aFolderMovedIsEachOfItsFilesMoved() async throws {
        let harness = try await WatcherHarness(files: ["pkg/a.py": "a", "pkg/sub/b.py": "b", "pkg/c.txt": "c"])
        let start = await harness.watcher.changes(since: nil).clock
        try harness.project.rename("pkg", "lib")
        _ = try await harness.changes.wait(timeout: .seconds(20), "the folder's move") {
            $0.contains(FileChange(.moved, "lib", from: "pkg", isDirectory: true))
        }
        let glob = try PathGlob("**/*.py")
        let answer = await harness.watcher.changes(since: start) { glob.matches($0.path) }
        #expect(!answer.isFresh)
        #expect(
            Set(answer.changes.map { "\($0.kind.rawValue) \($0.path) \($0.from ?? "")" })
                == ["removed pkg/a.py ", "moved lib/a.py pkg/a.py", "removed pkg/sub/b.py ", "moved lib/sub/b.py pkg/sub/b.py"])
        let everything = await harness.watcher.changes(since: start)
        #expect(everything.changes.contains(ChangedPath(path: "lib/", kind: .moved, from: "pkg/")))
        #expect(everything.changes.contains(ChangedPath(path: "pkg/", kind: .removed)))
        await harness.stop()
    }

    /// Editors' droppings and ignored folders are not the project's files, but git sees them:
    /// only a question that asks for ignored names (the fsmonitor hook's) hears of them; `.git`
    /// and the agent's state directory never appear.
    @Test func ignoredNamesAreForGitAloneAndTheAgentsOwnNeverAppear() async throws {
        let harness = try await WatcherHarness(
            files: ["a.txt": "a", "node_modules/x.js": "x", ".git/HEAD": "ref: refs/heads/main\n"],
            configure: { $0.watch.ignore = ["node_modules/"] })
        let start = await harness.watcher.changes(since: nil).clock
        try harness.project.write("a.txt~", "backup")
        try harness.project.write(".git/HEAD", "ref: refs/heads/other\n")
        try harness.project.write(".autosave/something", "state")
        try harness.project.write("b.txt", "b")
        try await harness.settleAll()
        let plain = await harness.watcher.changes(since: start)
        #expect(plain.changes.map(\.path) == ["b.txt"])
        let forGit = await harness.watcher.changes(since: start, includeIgnored: true)
        let paths = forGit.changes.map(\.path)
        #expect(paths.contains("a.txt~"))
        #expect(paths.contains("node_modules/"), "an ignored folder is not watched: it may have changed")
        #expect(paths.contains("b.txt"))
        #expect(!paths.contains { $0.hasPrefix(".git") || $0.hasPrefix(".autosave") }, "\(paths)")
        await harness.stop()
    }
}
