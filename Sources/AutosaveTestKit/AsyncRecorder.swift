import Synchronization

/// Records what a source produces, in order, so a test can wait for a condition on it.
///
/// Waiting is on a condition with a generous timeout, never a bare sleep: the timeout only
/// decides how long a failing test takes to fail. `append` is synchronous, so records from one
/// thread keep their order.
public final class AsyncRecorder<Element: Sendable>: Sendable {
    private struct Waiter {
        var id: Int
        var check: @Sendable ([Element], Bool) -> Bool
        var continuation: CheckedContinuation<Bool, Never>
    }

    private struct State {
        var elements: [Element] = []
        var isFinished = false
        var waiters: [Waiter] = []
        var nextWaiter = 0
    }

    private let state = Mutex(State())

    public init() {}

    /// Everything recorded so far, in order.
    public var elements: [Element] { state.withLock { $0.elements } }

    /// Whether the source has finished.
    public var isFinished: Bool { state.withLock { $0.isFinished } }

    /// Starts consuming `sequence` in a task that lives until it finishes.
    public func record<S: AsyncSequence & Sendable>(_ sequence: S) where S.Element == Element {
        Task {
            do {
                for try await element in sequence { self.append(element) }
            } catch {}
            self.finish()
        }
    }

    /// Appends one element.
    public func append(_ element: Element) {
        let ready = state.withLock { state in
            state.elements.append(element)
            return Self.takeSatisfied(&state)
        }
        for continuation in ready { continuation.resume(returning: true) }
    }

    /// Marks the source as finished; waiters whose condition can no longer change give up.
    public func finish() {
        let ready = state.withLock { state in
            state.isFinished = true
            return Self.takeSatisfied(&state)
        }
        for continuation in ready { continuation.resume(returning: true) }
    }

    /// Returns once the source has finished (or `timeout` passed).
    public func waitUntilFinished(timeout: Duration = .seconds(30)) async {
        _ = try? await wait(timeout: timeout, "finish", check: { _, finished in finished })
    }

    /// Waits until `condition` holds for the recorded elements, or `timeout` passes.
    ///
    /// - Returns: the elements at the moment the condition held.
    /// - Throws: `AsyncRecorderTimeout` listing everything recorded, so the failure shows what came.
    @discardableResult
    public func wait(
        timeout: Duration = .seconds(10), _ description: String = "condition",
        until condition: @escaping @Sendable ([Element]) -> Bool
    ) async throws -> [Element] {
        try await wait(timeout: timeout, description, check: { elements, _ in condition(elements) })
    }

    /// Waits for the first element (from index `start` on) that matches, and returns it.
    ///
    /// Each new element is checked once, so waiting stays cheap on long recordings.
    public func first(
        from start: Int = 0, timeout: Duration = .seconds(10), _ description: String = "element",
        where match: @escaping @Sendable (Element) -> Bool
    ) async throws -> Element {
        let cursor = Cursor<Element>(from: start)
        let elements = try await wait(timeout: timeout, description, check: { elements, _ in cursor.scan(elements, match) })
        return elements[cursor.found!]
    }

    private func wait(
        timeout: Duration, _ description: String, check: @escaping @Sendable ([Element], Bool) -> Bool
    ) async throws -> [Element] {
        let met = await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            let (id, satisfied) = state.withLock { state -> (Int, Bool) in
                if check(state.elements, state.isFinished) { return (-1, true) }
                let id = state.nextWaiter
                state.nextWaiter += 1
                state.waiters.append(Waiter(id: id, check: check, continuation: continuation))
                return (id, false)
            }
            if satisfied {
                continuation.resume(returning: true)
                return
            }
            Task {
                try? await Task.sleep(for: timeout)
                self.expire(id)
            }
        }
        let elements = self.elements
        guard met else {
            throw AsyncRecorderTimeout(description: description, recorded: elements.map { "\($0)" })
        }
        return elements
    }

    private func expire(_ id: Int) {
        let expired = state.withLock { state -> CheckedContinuation<Bool, Never>? in
            guard let index = state.waiters.firstIndex(where: { $0.id == id }) else { return nil }
            return state.waiters.remove(at: index).continuation
        }
        expired?.resume(returning: false)
    }

    private static func takeSatisfied(_ state: inout State) -> [CheckedContinuation<Bool, Never>] {
        var ready: [CheckedContinuation<Bool, Never>] = []
        state.waiters.removeAll { waiter in
            guard waiter.check(state.elements, state.isFinished) else { return false }
            ready.append(waiter.continuation)
            return true
        }
        return ready
    }
}

/// A waited-for condition did not hold in time.
public struct AsyncRecorderTimeout: Error, CustomStringConvertible {
    public var description: String

    init(description: String, recorded: [String]) {
        let shown = recorded.count > 200 ? Array(recorded.suffix(200)) : recorded
        self.description = "timed out waiting for \(description); \(recorded.count) recorded, the last:\n"
            + shown.joined(separator: "\n")
    }
}

/// Remembers how far a `first(where:)` wait has looked, so no element is checked twice.
private final class Cursor<Element>: @unchecked Sendable {
    // Only touched under the recorder's lock.
    var next: Int
    var found: Int?

    init(from start: Int) { next = start }

    func scan(_ elements: [Element], _ match: (Element) -> Bool) -> Bool {
        while found == nil && next < elements.count {
            if match(elements[next]) { found = next }
            next += 1
        }
        return found != nil
    }
}
