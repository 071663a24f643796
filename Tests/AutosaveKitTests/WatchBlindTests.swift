@testable import AutosaveKit
import AutosaveTestKit
import Foundation
import Glibc
import Testing

/// A folder whose absolute path is longer than `PATH_MAX` (4,096 bytes) cannot be watched
/// (`inotify_add_watch` takes a path): files made in it went unseen and nothing said so. The class
/// of bug: *a blind spot nobody is told of*. The property: every folder of the tree is watched,
/// or the log names it once (`watch-blind`) with the reason.
@Suite struct WatchBlindTests {
    @Test func aFolderPastPathMaxIsNamedOnceInTheLog() async throws {
        let harness = try await WorkspaceHarness()
        // Folders of 200-byte names, made one inside the other through descriptors (a path this
        // long cannot be named whole), until the newest lies past PATH_MAX.
        let name = String(repeating: "d", count: 200)
        var folder = open(harness.project.path, O_RDONLY | O_DIRECTORY)
        var relative: [String] = []
        while (harness.project.path.utf8.count + 201 * (relative.count + 1)) <= 4096 + 201 {
            #expect(mkdirat(folder, name, 0o755) == 0)
            let next = openat(folder, name, O_RDONLY | O_DIRECTORY)
            close(folder)
            folder = next
            relative.append(name)
            await harness.settleExternalChanges()
        }
        let fd = openat(folder, "unseen.txt", O_WRONLY | O_CREAT, 0o644)
        close(fd)
        close(folder)
        await harness.settleExternalChanges()
        let blind = harness.logged("watch-blind")
        #expect(blind.count == 1, "\(blind.map(\.fields))")
        #expect(blind.first?.fields["path"] == relative.joined(separator: "/"))
        #expect(blind.first?.fields["reason"]?.contains("PATH_MAX") == true)
        await harness.stop()
    }
}
