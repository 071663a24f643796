import AutosaveKit

/// `subscribe`: with no params the connection then receives every agent event as an `event`
/// notification (and a `dropped` one when it falls too far behind); with `since` or `glob` it
/// receives instead the tree's changes as `changes` notifications, one per settled burst, only
/// the paths matching a glob (the first one answers `since`, when given).
public struct SubscribeMethod: ControlMethod {
    public static var method: RPCMethod { .subscribe }

    /// Empty: events; otherwise changes.
    public var filter: ChangeFilter

    public init(filter: ChangeFilter = ChangeFilter()) {
        self.filter = filter
    }

    public var params: [JSONMember] { filter.members }

    public init(params: [JSONMember], content: [UInt8]?) throws(RPCError) {
        self.init(filter: try ChangeFilter(RPCParams(members: params)))
    }

    /// `{subscribed: true}`, with the `clock` changes are counted from for a change subscription.
    public struct Result: ControlResult {
        public var clock: String?

        public init(clock: String? = nil) { self.clock = clock }

        public var json: JSONValue {
            var members = [member("subscribed", .bool(true))]
            if let clock { members.append(member("clock", .string(clock))) }
            return .object(members)
        }

        public init(json: JSONValue) throws(RPCError) {
            let fields = try RPCParams(result: json)
            guard try fields.bool("subscribed") else { throw .invalidParams("`subscribed` must be true") }
            clock = try fields.optionalString("clock")
        }
    }
}
