import AutosaveKit
import Synchronization

/// One connection's answers, in request order, at most `size` of them queued or being sent.
///
/// The request loop pushes an answer per request and waits while the queue is full (a client
/// that never reads stops being read from); the answer loop takes everything queued at once, so
/// the answers to a pipelined burst go out in one socket write. A lock, not an actor: pushing is
/// on every request's path and must not cost a hop.
final class AnswerQueue: Sendable {
    private struct State {
        var queued: [PendingAnswer] = []
        /// Answers queued or taken and not yet released.
        var inFlight = 0
        var isFinished = false
        /// The answer loop, waiting for something to send.
        var taker: CheckedContinuation<[PendingAnswer]?, Never>?
        /// The request loop, waiting for room.
        var pushers: [CheckedContinuation<Void, Never>] = []

        mutating func reserve(_ size: Int) -> Bool {
            guard inFlight < size else { return false }
            inFlight += 1
            return true
        }

        /// The queued answers (emptying the queue), nil for "finished", or `.none` to wait.
        mutating func takeIfReady() -> [PendingAnswer]?? {
            if !queued.isEmpty {
                defer { queued = [] }
                return .some(queued)
            }
            return isFinished ? .some(nil) : .none
        }
    }

    let size: Int
    private let state = Mutex(State())

    init(size: Int) { self.size = size }

    /// Queues `answer` behind the ones before it; waits while the queue is full.
    func push(_ answer: PendingAnswer) async {
        if !state.withLock({ $0.reserve(size) }) {
            await withCheckedContinuation { continuation in
                let reserved = state.withLock { state in
                    if state.reserve(size) { return true }
                    state.pushers.append(continuation)
                    return false
                }
                // Otherwise `release` reserves the slot before it resumes us.
                if reserved { continuation.resume() }
            }
        }
        let taker = state.withLock { state -> CheckedContinuation<[PendingAnswer]?, Never>? in
            guard let taker = state.taker else {
                state.queued.append(answer)
                return nil
            }
            state.taker = nil
            return taker
        }
        taker?.resume(returning: [answer])
    }

    /// Everything queued, oldest first, waiting until there is something; nil once `finish()`
    /// was called and everything was taken.
    func next() async -> [PendingAnswer]? {
        if let batch = state.withLock({ $0.takeIfReady() }) { return batch }
        return await withCheckedContinuation { continuation in
            let batch = state.withLock { state -> [PendingAnswer]?? in
                if let ready = state.takeIfReady() { return ready }
                state.taker = continuation
                return .none
            }
            if let batch { continuation.resume(returning: batch) }
        }
    }

    /// Gives back the slots of `count` answers that were sent.
    func release(_ count: Int) {
        let resumed = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.inFlight -= count
            var resumed: [CheckedContinuation<Void, Never>] = []
            while !state.pushers.isEmpty, state.reserve(size) { resumed.append(state.pushers.removeFirst()) }
            return resumed
        }
        for pusher in resumed { pusher.resume() }
    }

    /// No more answers will come: `next()` returns nil once the queue is empty.
    func finish() {
        let taker = state.withLock { state -> CheckedContinuation<[PendingAnswer]?, Never>? in
            state.isFinished = true
            defer { state.taker = nil }
            return state.queued.isEmpty ? state.taker : nil
        }
        taker?.resume(returning: nil)
    }
}

/// One message to send: a JSON line and the raw bytes its `contentBytes` announced.
struct OutgoingMessage: Sendable {
    /// The JSON text, without its newline, as bytes in pieces sent one after another: an answer
    /// written as bytes goes to the socket's buffer without a String, or a line, made of it.
    var line: [[UInt8]]
    var content: TextRope? = nil

    init(line: String, content: TextRope? = nil) {
        self.init(pieces: [Array(line.utf8)], content: content)
    }

    init(pieces line: [[UInt8]], content: TextRope? = nil) {
        self.line = line
        self.content = content
    }
}

/// One answer in a connection's queue: ready to send, or waiting for its edit to be durable.
enum PendingAnswer: Sendable {
    /// The response line (nil: a notification, which gets none).
    case ready(String?)
    /// A method's result, sent once its edit (if any) is durable; an error response if that fails.
    case outcome(MethodOutcome, id: JSONValue?)
    /// The answer to `shutdown`: the agent is asked to stop once it is written, not before, or the
    /// socket could close under it and the client see no answer.
    case shutdownAnswer(String?)

    var isShutdownAnswer: Bool {
        if case .shutdownAnswer = self { return true }
        return false
    }

    /// What to send, once it can be sent; nil for a notification.
    func message() async -> OutgoingMessage? {
        switch self {
        case .ready(let line), .shutdownAnswer(let line):
            return line.map { OutgoingMessage(line: $0) }
        case .outcome(let outcome, let id):
            if let edit = outcome.edit {
                do { try await edit.waitUntilDurable() } catch {
                    return id.map { OutgoingMessage(line: RPCCodec.response(id: $0, error: RPCError(answering: error))) }
                }
            }
            return id.map { OutgoingMessage(pieces: RPCCodec.response(id: $0, written: outcome.result), content: outcome.content) }
        }
    }
}
