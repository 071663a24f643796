/// How the agent's timers are set and read, so that they wake when they are due rather than
/// a fraction of a millisecond after.
///
/// Measured here (a 2-vCPU VM): a task sleeping until an instant wakes 0.15-0.3 ms after it. The
/// settle timer and the autosave timer both serve windows whose end a user or a tool waits on,
/// so each is set `lead` early, and a wake-up treats what falls due within `slack` as due now.
enum TimerWakeUp {
    /// A timer is set this much before the deadline it serves: without it every window closed
    /// 0.15-0.3 ms after its configured length; with it, about on time.
    static var lead: Duration { .microseconds(100) }

    /// What falls due this soon after a wake-up is handled by it, rather than by one more timer
    /// for the rest (which would wake late again). Windows close within this of their length.
    static var slack: Duration { .microseconds(500) }

    /// When to set a timer that serves `deadline`.
    static func alarm<Instant: InstantProtocol>(for deadline: Instant) -> Instant where Instant.Duration == Duration {
        deadline.advanced(by: .zero - lead)
    }

    /// Whether `deadline` counts as reached when a timer wakes at `now`.
    static func isDue<Instant: InstantProtocol>(_ deadline: Instant, at now: Instant) -> Bool where Instant.Duration == Duration {
        now.advanced(by: slack) >= deadline
    }
}
