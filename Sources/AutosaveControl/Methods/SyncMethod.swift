import AutosaveKit

/// `sync`: answered once every external change made before it is in its buffer.
public struct SyncMethod: ParameterlessMethod {
    public static var method: RPCMethod { .sync }

    public init() {}

    /// `{synced: true}`.
    public struct Result: ControlAcknowledgement {
        public static var key: String { "synced" }
        public init() {}
    }
}
