import AutosaveKit
@testable import AutosaveMCP
import AutosaveTestKit
import Logging
import Synchronization
import Testing

/// How `autosave mcp` finds the project's next agent when its own went away (issue 33, item 6):
/// the lock decides who starts it, and the others join it. `find` and `start` are fault-injection
/// seams standing in for the socket search and the in-process agent; time is a `ManualClock`.
@Suite struct ProjectAgentsTests {
    /// What the seams saw and say: how often `start` was tried, and the socket `find` answers with.
    final class Project: Sendable {
        private let state = Mutex((starts: 0, running: String?.none))
        var starts: Int { state.withLock { $0.starts } }
        func tryStart() -> Int { state.withLock { $0.starts += 1; return $0.starts } }
        var running: String? {
            get { state.withLock { $0.running } }
            set { state.withLock { $0.running = newValue } }
        }
    }

    static let logger = Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }

    func agents(
        _ project: Project, clock: ManualClock, patience: Duration = .seconds(30), isRunning: @escaping @Sendable (Int) -> Bool = { _ in false },
        start: @escaping @Sendable () throws -> String
    ) -> ProjectAgents<ManualClock> {
        ProjectAgents(
            root: "/p", clock: clock, patience: patience, logger: Self.logger, find: { project.running }, start: start, isRunning: isRunning)
    }

    /// The server that lost the race for the lock waits for the winner's socket and joins it.
    @Test func aServerThatLosesTheLockJoinsTheAgentOfTheOneThatWon() async throws {
        let project = Project()
        let clock = ManualClock()
        let agents = agents(project, clock: clock) {
            // The winner holds the lock and listens from the third look on.
            if project.tryStart() == 2 { project.running = "/p/.autosave/agent.sock" }
            throw AgentLock.LockError.alreadyRunning(root: "/p", pid: 42)
        }
        let found = Task { try await agents.agent(replacing: "/p/.autosave/agent.sock") }
        await clock.waitForSleepers()
        clock.advance(by: .milliseconds(10))
        await clock.waitForSleepers()
        clock.advance(by: .milliseconds(20))
        #expect(try await found.value == "/p/.autosave/agent.sock")
        #expect(project.starts == 2, "no start after the winner's agent answered")
    }

    /// A lock held past `patience` with no agent answering fails, naming the holder.
    @Test func aLockHeldWithoutAnAgentFailsAfterPatienceNamingItsHolder() async throws {
        let project = Project()
        let clock = ManualClock()
        // Looks at 0 ms and 10 ms; the next would be at 30 ms, past patience.
        let agents = agents(project, clock: clock, patience: .milliseconds(15)) {
            _ = project.tryStart()
            throw AgentLock.LockError.alreadyRunning(root: "/p", pid: 7)
        }
        let found = Task { try await agents.agent(replacing: nil) }
        await clock.waitForSleepers()
        clock.advance(by: .milliseconds(10))
        let error = await #expect(throws: AgentUnavailable.self) { try await found.value }
        #expect("\(error!)".hasPrefix("no autosave agent answered for /p within 15 ms: another process (pid 7) holds its lock"), "\(error!)")
        #expect(project.starts == 2)
    }

    /// While the process holding the lock is there, no agent is made to find that out again: its
    /// socket is looked for until it answers.
    @Test func whileTheHolderOfTheLockRunsStartIsNotTriedAgain() async throws {
        let project = Project()
        let clock = ManualClock()
        let agents = agents(project, clock: clock, isRunning: { $0 == 42 }) {
            _ = project.tryStart()
            throw AgentLock.LockError.alreadyRunning(root: "/p", pid: 42)
        }
        let found = Task { try await agents.agent(replacing: nil) }
        for _ in 0..<3 {
            await clock.waitForSleepers()
            clock.advance(by: .milliseconds(320))
        }
        await clock.waitForSleepers()
        project.running = "/p/.autosave/agent.sock"
        clock.advance(by: .milliseconds(320))
        #expect(try await found.value == "/p/.autosave/agent.sock")
        #expect(project.starts == 1)
    }

    /// A start that fails for another reason than the lock is not tried again.
    @Test func aStartThatFailsOtherwiseIsReportedAtOnce() async throws {
        struct Broken: Error, CustomStringConvertible { var description: String { "the root cannot be watched" } }
        let project = Project()
        let agents = agents(project, clock: ManualClock()) {
            _ = project.tryStart()
            throw Broken()
        }
        let error = await #expect(throws: AgentUnavailable.self) { try await agents.agent(replacing: nil) }
        #expect("\(error!)" == "no autosave agent answers for /p, and none could be started here: the root cannot be watched")
        #expect(project.starts == 1)
    }
}
