import Foundation
import Synchronization

/// Hands every `AgentEvent` to every subscriber, each through its own unbounded stream.
final class EventBroadcast: Sendable {
    private let subscribers = Mutex<[UUID: AsyncStream<AgentEvent>.Continuation]>([:])

    /// A new stream of every event from now on; it ends when the subscriber stops iterating.
    func subscribe() -> AsyncStream<AgentEvent> {
        let (stream, continuation) = AsyncStream.makeStream(of: AgentEvent.self)
        let id = UUID()
        subscribers.withLock { $0[id] = continuation }
        continuation.onTermination = { [weak self] _ in
            _ = self?.subscribers.withLock { $0.removeValue(forKey: id) }
        }
        return stream
    }

    func emit(_ event: AgentEvent) {
        let targets = subscribers.withLock { Array($0.values) }
        for continuation in targets { continuation.yield(event) }
    }

    func finish() {
        let targets = subscribers.withLock { table in
            defer { table.removeAll() }
            return Array(table.values)
        }
        for continuation in targets { continuation.finish() }
    }
}
