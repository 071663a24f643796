import AutosaveKit

/// `subscribe`: the connection then receives every agent event as an `event` notification (and a
/// `dropped` one when it falls too far behind).
public struct SubscribeMethod: ParameterlessMethod {
    public static var method: RPCMethod { .subscribe }

    public init() {}

    /// `{subscribed: true}`.
    public struct Result: ControlAcknowledgement {
        public static var key: String { "subscribed" }
        public init() {}
    }
}
