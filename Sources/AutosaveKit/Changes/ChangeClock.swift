/// A point in one agent's sequence of changes, as clients hold it: `autosave:<instance>:<seq>`.
///
/// Opaque to clients: they hand back what they were given. The instance is new at every start
/// of an agent, so a clock from an earlier run (or another agent) is recognised as such and
/// answered `fresh`, never with a list that would be silently short.
public struct ChangeClock: Sendable, Hashable, CustomStringConvertible {
    /// The agent run this clock belongs to.
    public var instance: String
    /// How many changes that run had recorded at this point.
    public var sequence: UInt64

    public init(instance: String, sequence: UInt64) {
        self.instance = instance
        self.sequence = sequence
    }

    /// Reads a token a client handed back; nil for anything that is not one (the caller then
    /// answers `fresh`: an unknown clock means "I know nothing").
    public init?(token: String) {
        let parts = token.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0] == "autosave", !parts[1].isEmpty,
            parts[1].utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") || $0 >= UInt8(ascii: "a") && $0 <= UInt8(ascii: "f") }),
            let sequence = UInt64(parts[2])
        else { return nil }
        self.init(instance: String(parts[1]), sequence: sequence)
    }

    /// The token form: `autosave:<instance>:<seq>`.
    public var description: String { "autosave:\(instance):\(sequence)" }

    /// A new instance name: 16 hex digits from the system's random source.
    public static func newInstance() -> String {
        var generator = SystemRandomNumberGenerator()
        let value = generator.next() as UInt64
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }
}
