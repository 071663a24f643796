/// Records what an async sequence produces so a test can wait for a condition on it.
///
/// Waiting is on a condition with a generous timeout, never a bare sleep: the timeout only
/// decides how long a failing test takes to fail.
public actor AsyncRecorder<Element: Sendable> {
    /// Everything recorded so far, in order.
    public private(set) var elements: [Element] = []
    private var isFinished = false
    private var waiters: [(id: Int, check: @Sendable ([Element], Bool) -> Bool, continuation: CheckedContinuation<Bool, Never>)] = []
    private var nextWaiter = 0

    public init() {}

    /// Starts consuming `sequence` in a task that lives until it finishes.
    public nonisolated func record<S: AsyncSequence & Sendable>(_ sequence: S) where S.Element == Element {
        Task {
            do {
                for try await element in sequence { await self.append(element) }
            } catch {}
            await self.finish()
        }
    }

    /// Appends one element (for sources that are not sequences, such as a log handler).
    public func append(_ element: Element) {
        elements.append(element)
        resolveWaiters()
    }

    func finish() {
        isFinished = true
        resolveWaiters()
    }

    /// Waits until `condition` holds for the recorded elements, or `timeout` passes.
    ///
    /// - Returns: the elements at the moment the condition held.
    /// - Throws: `AsyncRecorderTimeout` with everything recorded, so the failure shows what came.
    @discardableResult
    public func wait(
        timeout: Duration = .seconds(10), _ description: String = "condition",
        until condition: @escaping @Sendable ([Element]) -> Bool
    ) async throws -> [Element] {
        if condition(elements) { return elements }
        let id = nextWaiter
        nextWaiter += 1
        let timer = Task {
            try? await Task.sleep(for: timeout)
            self.expire(id)
        }
        let met = await withCheckedContinuation { continuation in
            waiters.append((id, { elements, _ in condition(elements) }, continuation))
        }
        timer.cancel()
        guard met else { throw AsyncRecorderTimeout(description: description, recorded: elements.map { "\($0)" }) }
        return elements
    }

    /// Waits for the first element (from index `start` on) that matches, and returns it.
    ///
    /// Each new element is checked once, so waiting stays cheap on long recordings.
    public func first(
        from start: Int = 0, timeout: Duration = .seconds(10), _ description: String = "element",
        where match: @escaping @Sendable (Element) -> Bool
    ) async throws -> Element {
        if let found = elements.dropFirst(start).first(where: match) { return found }
        let checked = Checked<Element>(from: max(start, elements.count))
        try await wait(timeout: timeout, description) { elements in
            checked.scan(elements, match)
        }
        return elements[checked.found!]
    }

    private func expire(_ id: Int) {
        guard let index = waiters.firstIndex(where: { $0.id == id }) else { return }
        waiters.remove(at: index).continuation.resume(returning: false)
    }

    private func resolveWaiters() {
        var remaining: [(id: Int, check: @Sendable ([Element], Bool) -> Bool, continuation: CheckedContinuation<Bool, Never>)] = []
        for waiter in waiters {
            if waiter.check(elements, isFinished) {
                waiter.continuation.resume(returning: true)
            } else {
                remaining.append(waiter)
            }
        }
        waiters = remaining
    }
}

/// A waited-for condition did not hold in time.
public struct AsyncRecorderTimeout: Error, CustomStringConvertible {
    public var description: String

    init(description: String, recorded: [String]) {
        self.description = "timed out waiting for \(description); recorded:\n" + recorded.joined(separator: "\n")
    }
}

/// Remembers how far a `first(where:)` wait has looked, so no element is checked twice.
private final class Checked<Element>: @unchecked Sendable {
    // Only touched from the recorder actor's executor.
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
