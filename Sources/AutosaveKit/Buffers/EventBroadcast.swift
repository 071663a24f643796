import Foundation
import Synchronization

/// Hands every `AgentEvent` to every subscriber, each through its own bounded stream.
///
/// A subscriber that falls more than `backlog` events behind (a client that stops reading its
/// socket) is cut off, so it cannot make the agent hold an unbounded queue for it.
final class EventBroadcast: Sendable {
    private let subscribers = Mutex<[UUID: AsyncStream<AgentEvent>.Continuation]>([:])
    /// Events held for one subscriber at most.
    static var backlog: Int { 10_000 }

    /// A new stream of every event from now on; it ends when the subscriber stops iterating or
    /// falls `backlog` events behind.
    func subscribe() -> AsyncStream<AgentEvent> {
        let (stream, continuation) = AsyncStream.makeStream(
            of: AgentEvent.self, bufferingPolicy: .bufferingOldest(Self.backlog))
        let id = UUID()
        subscribers.withLock { $0[id] = continuation }
        continuation.onTermination = { [weak self] _ in
            _ = self?.subscribers.withLock { $0.removeValue(forKey: id) }
        }
        return stream
    }

    func emit(_ event: AgentEvent) {
        let targets = subscribers.withLock { Array($0.values) }
        for continuation in targets {
            if case .dropped = continuation.yield(event) { continuation.finish() }
        }
    }

    func finish() {
        let targets = subscribers.withLock { table in
            defer { table.removeAll() }
            return Array(table.values)
        }
        for continuation in targets { continuation.finish() }
    }
}
