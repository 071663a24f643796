/// Where a `DirectoryWatcher` delivers its events, on the watcher thread.
///
/// The watcher's own `events` stream is one such sink. A caller that merges the events with
/// inputs of its own (timers, say) gives its own sink instead, so each event reaches it
/// without a task forwarding it from one stream to another: one thread wake-up less per event.
public struct WatchEventSink: Sendable {
    let deliver: @Sendable (WatchEvent) -> Void
    let end: @Sendable () -> Void

    /// - Parameters:
    ///   - deliver: takes each event in kernel order; called on the watcher thread, so it must
    ///     not block (yielding to an `AsyncStream` is the intended use).
    ///   - end: called once after the last event (after `stop()` or a fatal `.failed`).
    public init(deliver: @escaping @Sendable (WatchEvent) -> Void, end: @escaping @Sendable () -> Void) {
        self.deliver = deliver
        self.end = end
    }

    /// A sink that feeds `continuation` and finishes it after the last event.
    public init(_ continuation: AsyncStream<WatchEvent>.Continuation) {
        self.init(deliver: { continuation.yield($0) }, end: { continuation.finish() })
    }

    func yield(_ event: WatchEvent) { deliver(event) }
    func finish() { end() }
}
