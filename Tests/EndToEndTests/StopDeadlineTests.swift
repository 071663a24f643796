import AutosaveTestKit
import Foundation
import Testing

/// A stop ends within `limits.stopTimeoutMs` whatever a blocking call is doing. The call is held by a
/// real kernel mechanism: a write lease this test takes on the file, which makes the agent's
/// `open` of it wait for the kernel's `lease-break-time` (45 s by default), as an `open` on a hung
/// FUSE or NFS mount waits.
@Suite(.enabled(if: FileLease.breakTime >= 20, "needs /proc/sys/fs/lease-break-time of 20 s or more, to tell a hang from a bounded stop"))
struct StopDeadlineTests {
    /// Sends SIGTERM to an agent whose stop is held (its deadline 2 s), expects it gone with status
    /// 1 well before the lease would have let go, and returns its `stop-timeout` line.
    static func stopPastItsDeadline(_ agent: AgentProcess) async throws -> String {
        let stopped = ContinuousClock.now
        agent.signal(SIGTERM)
        #expect(await agent.exitStatus(timeout: .seconds(20)) == 1)
        #expect(ContinuousClock.now - stopped < .seconds(15))
        return try #require(agent.stderrLines.elements.first { $0.contains(" stop-timeout ") })
    }

    /// The final flush's save waited on the file for 45 s before the agent exited; now it exits
    /// (status 1) at the deadline, says the edit is in the journal, and the next start saves it.
    @Test func aFlushBlockedOnAFileEndsAtTheDeadlineAndTheNextStartSavesTheEdit() async throws {
        let project = try TemporaryDirectory()
        try project.write("a.txt", "old\n")
        // A second link makes the save write the file's own inode, which opens it.
        try FileManager.default.linkItem(atPath: project.url("a.txt"), toPath: project.url("b.txt"))
        let agent = try await AgentProcess.started(
            on: project, config: #"{"limits": {"stopTimeoutMs": 2000}, "autosave": {"delayMs": 600000, "maxDelayMs": 600000}}"#)
        #expect(try await AgentProcess.client(["write", "a.txt"], in: project, stdin: "edited\n").status == 0)
        let lease = try FileLease(project.url("a.txt"))
        let line = try await Self.stopPastItsDeadline(agent)
        #expect(line.contains("blockingCalls=1") && line.contains("edits not saved yet are in the journal"), "\(line)")
        lease.release()

        // The lock went with the process: the next agent starts at once and brings the edit back.
        let next = try await AgentProcess.started(on: project)
        #expect(next.stderrLines.elements.contains { $0.contains(" recovered ") && $0.contains("path=a.txt") })
        next.signal(SIGTERM)
        #expect(await next.exitStatus() == 0)
        #expect(try project.read("a.txt") == "edited\n")
        #expect(try project.read("b.txt") == "edited\n")
    }

    /// `autosave cat` of a file the agent could not open kept the stopping agent (socket closed,
    /// lock held) until the open returned; now the stop ends at the deadline, every edit saved.
    @Test func aRequestBlockedOnAFileDoesNotHoldTheStop() async throws {
        let project = try TemporaryDirectory()
        try project.write("a.txt", "content\n")
        let agent = try await AgentProcess.started(on: project, config: #"{"limits": {"stopTimeoutMs": 2000}}"#)
        let lease = try FileLease(project.url("a.txt"))
        defer { lease.release() }
        let reader = try AgentProcess(["cat", "a.txt"], in: project.path)
        #expect(await lease.waitUntilBreaking(), "the agent's read of a.txt never reached the lease")
        let line = try await Self.stopPastItsDeadline(agent)
        #expect(line.contains("saved=0") && line.contains("every unsaved edit was saved"), "\(line)")
        #expect(await reader.exitStatus() == 1)
    }
}

/// A write lease on a file, held by the test process: another process's `open` of the file waits
/// until the lease is given back or `lease-break-time` passes.
final class FileLease: Sendable {
    private let descriptor: Int32
    /// The kernel's word that another process's `open` waits on the lease: SIGIO to the holder.
    private let breaks = AsyncRecorder<Void>()
    private let source: BreakSignal

    /// `F_SETLEASE`, which Glibc's Swift module hides behind `_GNU_SOURCE`.
    private static let setLease: Int32 = 1024

    /// Seconds the kernel lets a lease holder take before it breaks the lease itself.
    static var breakTime: Int {
        (try? String(contentsOfFile: "/proc/sys/fs/lease-break-time", encoding: .utf8))
            .flatMap { Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) } ?? 0
    }

    /// Takes a write lease on `path`, which no other process may have open.
    init(_ path: String) throws {
        // The kernel tells a holder that someone waits with SIGIO, whose default action ends it:
        // ignored, and heard through a dispatch source (set up before the lease is taken).
        signal(SIGIO, SIG_IGN)
        let breaks = self.breaks
        let source = DispatchSource.makeSignalSource(signal: SIGIO, queue: DispatchQueue(label: "autosave.test.lease"))
        source.setEventHandler { breaks.append(()) }
        source.resume()
        self.source = BreakSignal(source: source)
        descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0, fcntl(descriptor, Self.setLease, Int32(F_WRLCK)) == 0 else {
            throw CocoaError(.fileReadUnknown, userInfo: [NSFilePathErrorKey: path, NSUnderlyingErrorKey: POSIXError(.init(rawValue: errno)!)])
        }
    }

    /// Waits until another process's `open` of the file waits on the lease (the kernel's SIGIO to
    /// the holder), for up to `timeout`; returns whether it did.
    func waitUntilBreaking(timeout: Duration = .seconds(10)) async -> Bool {
        (try? await breaks.first(timeout: timeout, "SIGIO: the lease breaking") { _ in true }) != nil
    }

    /// Gives the lease back; the waiting `open` goes on.
    func release() {
        source.source.cancel()
        close(descriptor)
    }
}

/// The lease's signal source. Dispatch sources are thread-safe objects that Swift does not mark
/// `Sendable`; this one is only created, and cancelled once.
private struct BreakSignal: @unchecked Sendable {
    let source: any DispatchSourceSignal
}
