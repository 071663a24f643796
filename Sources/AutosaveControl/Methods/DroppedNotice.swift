import AutosaveKit

/// The `dropped` notification: a subscriber that fell too far behind is let go, told how many
/// events it missed (after the events held for it, before the end of its connection).
public struct DroppedNotice: Sendable, Equatable {
    /// The notification's method.
    public static var method: String { "dropped" }

    /// Why it was let go: `behind`.
    public var reason: String
    /// Events it did not get.
    public var missed: Int

    public init(reason: String = "behind", missed: Int) {
        self.reason = reason
        self.missed = missed
    }

    public var json: JSONValue { .object([member("reason", .string(reason)), member("missed", .number(String(missed)))]) }

    /// Reads the notification's params.
    ///
    /// - Throws: `RPCError.invalidParams` naming the member that is missing or of the wrong type.
    public init(json: JSONValue) throws(RPCError) {
        let params = try RPCParams(result: json)
        self.init(reason: try params.string("reason"), missed: try params.int("missed"))
    }
}
