import AutosaveTestKit
import Foundation
import Testing

/// Whether this machine lets an unprivileged user namespace lower its own inotify limits.
private let userNamespacesAvailable: Bool = {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/unshare")
    process.arguments = ["-U", "-r", "sh", "-c", "echo 100 > /proc/sys/user/max_inotify_watches"]
    process.standardError = FileHandle.nullDevice
    guard (try? process.run()) != nil else { return false }
    process.waitUntilExit()
    return process.terminationStatus == 0
}()

/// The watch limit, hit for real: the agent in a user namespace whose `max_inotify_watches` is 4.
@Suite struct WatchLimitTests {
    /// The agent on `project` in a user namespace allowed 4 watches, rescanning every second.
    static func agentWithFourWatches(on project: TemporaryDirectory) throws -> AgentProcess {
        try project.write("autosave.json", #"{"watch": {"rescanIntervalS": 1}}"#)
        return try AgentProcess(
            [
                "-U", "-r", "sh", "-c", "echo 4 > /proc/sys/user/max_inotify_watches && exec \"$0\" run \"$1\"",
                AgentProcess.binary, project.path,
            ], executable: "/usr/bin/unshare")
    }

    @Test(
        .enabled(if: userNamespacesAvailable, "skipped: `unshare -U -r` cannot lower max_inotify_watches on this machine"))
    func unwatchedDirectoriesAreRescannedAndTheLimitIsLoggedOnce() async throws {
        let project = try TemporaryDirectory()
        let folders = ["a", "b", "c", "d", "e"]
        for folder in folders { try project.write("\(folder)/old.txt", "x") }
        let agent = try Self.agentWithFourWatches(on: project)
        let ready = try await agent.stderrLines.first(timeout: .seconds(30), "ready") { $0.contains(" ready ") }
        #expect(ready.contains("dirs=6"))
        #expect(ready.contains("watches=3"), "the cookie directory takes the fourth watch")
        let limit = try await agent.stderrLines.first(timeout: .seconds(30), "watch-limit") { $0.contains(" watch-limit ") }
        #expect(limit.contains(" warning watch-limit "))
        #expect(limit.contains("limit=4"))
        #expect(limit.contains("unwatched=3"))
        #expect(limit.contains("sysctl=\"sysctl -w user.max_inotify_watches=524288\""))
        #expect(limit.contains("next="))

        for folder in folders { try project.write("\(folder)/new.txt", "y") }
        for folder in folders {
            _ = try await agent.stderrLines.first(timeout: .seconds(30), "\(folder)/new.txt") {
                $0.contains("external-change path=\(folder)/new.txt kind=created")
            }
        }
        let rescan = try await agent.stderrLines.first(timeout: .seconds(30), "a rescan that found files") {
            $0.contains(" rescan ") && !$0.contains("created=0")
        }
        #expect(rescan.contains("unwatched=3"))
        #expect(agent.stderrLines.elements.filter { $0.contains("watch-limit") }.count == 1)
        #expect(!agent.stderrLines.elements.contains { $0.contains("path=a/old.txt") }, "nothing unchanged is reported")

        agent.signal(SIGTERM)
        #expect(await agent.exitStatus() == 0)
    }

    /// An unwatched directory whose unwatched subdirectory is deleted: the rescan that finds it
    /// gone must forget it for good. It used to be put back among the unwatched as it was
    /// reached later in the same rescan; detached, its path read as the root's, and the next
    /// rescan watched the root for it, so every event in the root went to a directory that was
    /// no longer in the tree and was dropped.
    @Test(
        .enabled(if: userNamespacesAvailable, "skipped: `unshare -U -r` cannot lower max_inotify_watches on this machine"))
    func aVanishedUnwatchedDirectoryIsForgottenAndTheRootStaysWatched() async throws {
        let project = try TemporaryDirectory()
        // Three directories below the root, each with one inside: the root and two of the three
        // get the limit's watches, so at least one `p*` and all three `p*/c` go unwatched.
        for parent in ["p1", "p2", "p3"] { try project.write("\(parent)/c/old.txt", "x") }
        let agent = try Self.agentWithFourWatches(on: project)
        let ready = try await agent.stderrLines.first(timeout: .seconds(30), "ready") { $0.contains(" ready ") }
        #expect(ready.contains("dirs=7"))
        for parent in ["p1", "p2", "p3"] { try project.remove("\(parent)/c") }
        // Two rescans after the removal: the one that finds the directories gone, and the next.
        for rescan in 1...2 {
            let start = agent.stderrLines.elements.count
            _ = try await agent.stderrLines.first(from: start, timeout: .seconds(30), "rescan \(rescan) after") {
                $0.contains(" rescan ")
            }
        }
        try project.write("new-in-root.txt", "y")
        _ = try await agent.stderrLines.first(timeout: .seconds(30), "new-in-root.txt") {
            $0.contains("external-change path=new-in-root.txt kind=created")
        }
        let last = try #require(agent.stderrLines.elements.last { $0.contains(" rescan ") })
        #expect(last.contains("unwatched=1"), "only the unwatched p* is left: \(last)")

        agent.signal(SIGTERM)
        #expect(await agent.exitStatus() == 0)
    }
}
