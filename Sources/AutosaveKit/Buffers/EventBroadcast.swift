import FoundationEssentials
import Synchronization

/// Hands every `AgentEvent` to every subscriber, each through its own bounded stream.
///
/// A subscriber that falls more than `backlog` events behind (a client that stops reading its
/// socket) is cut off, so it cannot make the agent hold an unbounded queue for it: its stream
/// ends after the events it holds, and its `EventSubscription` tells how many it missed, so
/// the client can be told instead of being starved in silence.
final class EventBroadcast: Sendable {
    private struct Subscriber: Sendable {
        let continuation: AsyncStream<AgentEvent>.Continuation
        let subscription: EventSubscription
        let onCutOff: @Sendable () -> Void
    }

    private let subscribers = Mutex<[UUID: Subscriber]>([:])
    /// Events held for one subscriber at most.
    static var backlog: Int { 10_000 }

    /// A new subscription to every event from now on; `onCutOff` runs once, at the moment the
    /// subscriber falls `backlog` events behind.
    func subscribe(backlog: Int = EventBroadcast.backlog, onCutOff: @escaping @Sendable () -> Void = {}) -> EventSubscription {
        let (stream, continuation) = AsyncStream.makeStream(of: AgentEvent.self, bufferingPolicy: .bufferingOldest(backlog))
        let id = UUID()
        let subscription = EventSubscription(events: stream) { [weak self] in
            _ = self?.subscribers.withLock { $0.removeValue(forKey: id) }
        }
        subscribers.withLock { $0[id] = Subscriber(continuation: continuation, subscription: subscription, onCutOff: onCutOff) }
        continuation.onTermination = { [weak self] _ in
            // A subscriber cut off stays listed, counting what it misses, until it has been told.
            guard !subscription.isCutOff else { return }
            _ = self?.subscribers.withLock { $0.removeValue(forKey: id) }
        }
        return subscription
    }

    func emit(_ event: AgentEvent) {
        let targets = subscribers.withLock { Array($0.values) }
        for subscriber in targets {
            if subscriber.subscription.isCutOff {
                subscriber.subscription.countMissed()
                continue
            }
            if case .dropped = subscriber.continuation.yield(event) {
                subscriber.subscription.countMissed()
                subscriber.continuation.finish()
                subscriber.onCutOff()
            }
        }
    }

    func finish() {
        let targets = subscribers.withLock { table in
            defer { table.removeAll() }
            return Array(table.values)
        }
        for subscriber in targets { subscriber.continuation.finish() }
    }
}

/// One subscriber's events, and whether it was cut off for falling behind.
public final class EventSubscription: Sendable {
    /// Every event from the subscription on; ends at shutdown, or after the held events when the
    /// subscriber fell `EventBroadcast.backlog` events behind.
    public let events: AsyncStream<AgentEvent>
    private let missedEvents = Mutex<Int?>(nil)
    private let unsubscribe: @Sendable () -> Void

    init(events: AsyncStream<AgentEvent>, unsubscribe: @escaping @Sendable () -> Void) {
        self.events = events
        self.unsubscribe = unsubscribe
    }

    /// Whether the subscriber fell too far behind and gets no more events.
    var isCutOff: Bool { missedEvents.withLock { $0 != nil } }

    fileprivate func countMissed() { missedEvents.withLock { $0 = ($0 ?? 0) + 1 } }

    /// Ends the subscription once its events have run out.
    ///
    /// - Returns: how many events the subscriber missed because it fell behind; nil when it
    ///   missed none (the stream ended because the agent stopped).
    public func end() -> Int? {
        unsubscribe()
        return missedEvents.withLock { $0 }
    }
}
