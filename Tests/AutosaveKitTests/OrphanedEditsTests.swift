@testable import AutosaveKit
import Glibc
import Testing

/// Where a deleted root's unsaved edits go: the user's state folder, found even when the agent
/// runs as a service with no `HOME`.
@Suite struct OrphanedEditsTests {
    @Test func withoutHomeTheFolderIsInTheHomeThePasswordDatabaseNames() throws {
        let entry = try #require(getpwuid(getuid()))
        let home = String(cString: try #require(entry.pointee.pw_dir))
        let orphans = OrphanedEdits(root: "/srv/project", environment: [:])
        #expect(orphans.directory.hasPrefix(home + "/.local/state/autosave/orphans/project-"))
    }

    @Test func aRelativeStateHomeIsIgnoredAndHomeIsUsed() {
        let orphans = OrphanedEdits(root: "/srv/project", environment: ["XDG_STATE_HOME": "state", "HOME": "/home/someone"])
        #expect(orphans.directory.hasPrefix("/home/someone/.local/state/autosave/orphans/project-"))
        let absolute = OrphanedEdits(root: "/srv/project", environment: ["XDG_STATE_HOME": "/var/state", "HOME": "/home/someone"])
        #expect(absolute.directory.hasPrefix("/var/state/autosave/orphans/project-"))
    }

    @Test func twoRootsOfOneNameGetFoldersOfTheirOwn() {
        let first = OrphanedEdits(root: "/a/project", environment: ["HOME": "/h"])
        let second = OrphanedEdits(root: "/b/project", environment: ["HOME": "/h"])
        #expect(first.directory != second.directory)
    }
}
