import AutosaveKit

/// `close`: saves the buffer if it is dirty, then forgets it.
public struct CloseMethod: ControlMethod {
    public static var method: RPCMethod { .close }

    public var path: String

    public init(path: String) {
        self.path = path
    }

    public var params: [JSONMember] { [member("path", .string(path))] }

    public init(params: [JSONMember], content: [UInt8]?) throws(RPCError) {
        self.init(path: try RPCParams(members: params, raw: content).string("path"))
    }

    /// `{closed: true}`.
    public struct Result: ControlAcknowledgement {
        public static var key: String { "closed" }
        public init() {}
    }
}
