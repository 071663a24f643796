/// Durations as the log and the protocol state them: in milliseconds.
extension Duration {
    /// The whole milliseconds in the duration, rounded toward zero (negative for a duration
    /// before zero): what `next` texts and `pendingSaveInMilliseconds` show.
    public var wholeMilliseconds: Int64 {
        components.seconds * 1000 + components.attoseconds / 1_000_000_000_000_000
    }

    /// The duration in milliseconds with their fraction: what `ms=` fields measure.
    public var milliseconds: Double {
        Double(components.seconds) * 1000 + Double(components.attoseconds) / 1e15
    }
}
