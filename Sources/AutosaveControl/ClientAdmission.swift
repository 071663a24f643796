import AutosaveKit
import Glibc
import Logging
import Synchronization

/// Which clients the control socket serves, so that clients never take the descriptors the agent
/// needs to save files (and the runtime needs to live: see `DescriptorBudget`).
///
/// At most `budget.clients` are served at once; one more, or one accepted while the process has
/// no descriptor left (`SpareDescriptor`), is answered `outOfDescriptors` and closed. A spell of
/// refusals is logged once when it starts (`descriptors-exhausted`) and once when it ends
/// (`descriptors-recovered`, with how many were refused): at the first client served a second or
/// more after the last refusal, so a limit that comes and goes logs one spell, not a line a client.
final class ClientAdmission: Sendable {
    /// Why clients are being refused.
    enum Cause: String, Sendable {
        /// The clients connected hold every descriptor the budget gives clients.
        case clients
        /// Accept failed: the process has no descriptor left (`EMFILE`).
        case process
        /// Accept failed: the system has no file left (`ENFILE`).
        case system
    }

    let budget: DescriptorBudget
    private let logger: Logger
    private let state = Mutex(AdmissionState())

    init(budget: DescriptorBudget, logger: Logger) {
        self.budget = budget
        self.logger = logger
    }

    /// Counts a client in and returns true, or returns false (and counts the refusal) when
    /// `budget.clients` are connected already.
    func admit() -> Bool {
        let outcome = state.withLock { $0.admit(within: budget.clients, at: .now) }
        switch outcome {
        case .admitted(let spell?): logRecovered(spell)
        case .refused(let connected, isFirst: true): logExhausted(.clients, connected: connected)
        case .admitted(nil), .refused(_, isFirst: false): break
        }
        return if case .admitted = outcome { true } else { false }
    }

    /// Counts a served client out.
    func leave() {
        state.withLock { $0.connected -= 1 }
    }

    /// Counts the clients `SpareDescriptor` refused after accept failed with `code`.
    func acceptFailed(_ code: CInt, refused: Int) {
        if case .refused(let connected, isFirst: true) = state.withLock({ $0.refuse(refused, at: .now) }) {
            logExhausted(code == ENFILE ? .system : .process, connected: connected)
        }
    }

    /// The answer a refused client reads before its connection closes, without its newline.
    func refusal(_ cause: Cause) -> String {
        let why =
            switch cause {
            case .clients:
                "the agent serves \(budget.clients) clients at once (a quarter of the \(budget.free) file descriptors "
                    + "left free under its limit of \(budget.limit)) and all are taken"
            case .process: "the agent has run out of file descriptors (its limit is \(DescriptorBudget.currentLimit()))"
            case .system: "the system has run out of open files"
            }
        return RPCCodec.response(
            id: nil,
            error: .refused(
                "\(why); nothing was read or changed: try again once another client disconnects, "
                    + "or raise the agent's `ulimit -n`",
                data: .object([member("reason", .string("outOfDescriptors"))])))
    }

    private func logExhausted(_ cause: Cause, connected: Int) {
        logger.warning(
            "descriptors-exhausted",
            metadata: [
                "cause": "\(cause.rawValue)", "limit": "\(DescriptorBudget.currentLimit())", "clients": "\(connected)",
                "next": "each new client is told why and closed until descriptors are free again; the clients connected are served",
            ])
    }

    private func logRecovered(_ spell: AdmissionState.Spell) {
        let milliseconds = ((ContinuousClock.now - spell.since) / .milliseconds(1)).rounded()
        logger.info("descriptors-recovered", metadata: ["refused": "\(spell.refused)", "ms": "\(Int(milliseconds))"])
    }
}

/// Clients connected and the spell of refusals under way, as a value: what `ClientAdmission`
/// guards with its lock.
struct AdmissionState {
    /// Refusals from the first to the last, and how many.
    struct Spell {
        var since: ContinuousClock.Instant
        var last: ContinuousClock.Instant
        var refused: Int
    }

    /// What became of a client, and whether it starts or ends a spell to log.
    enum Outcome {
        case admitted(endingSpell: Spell?)
        case refused(connected: Int, isFirst: Bool)
    }

    /// How long no client may be refused before a client served ends the spell.
    static let quietToRecover = Duration.seconds(1)

    var connected = 0
    var spell: Spell?

    mutating func admit(within limit: Int, at now: ContinuousClock.Instant) -> Outcome {
        guard connected < limit else { return refuse(1, at: now) }
        connected += 1
        guard let ended = spell, now - ended.last >= Self.quietToRecover else { return .admitted(endingSpell: nil) }
        spell = nil
        return .admitted(endingSpell: ended)
    }

    mutating func refuse(_ count: Int, at now: ContinuousClock.Instant) -> Outcome {
        let isFirst = spell == nil
        var current = spell ?? Spell(since: now, last: now, refused: 0)
        current.last = now
        current.refused += count
        spell = current
        return .refused(connected: connected, isFirst: isFirst)
    }
}
