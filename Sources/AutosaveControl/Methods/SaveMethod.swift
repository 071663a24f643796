import AutosaveKit

/// `save`: saves now; answered once the files are durable.
public struct SaveMethod: ControlMethod {
    public static var method: RPCMethod { .save }

    public var target: Target

    /// What to save.
    public enum Target: Sendable, Equatable {
        /// `all: true` (or no `paths`): every open buffer.
        case all
        /// `paths`: these buffers; one with no open buffer is refused, the others still saved.
        case paths([String])
    }

    public init(_ target: Target) {
        self.target = target
    }

    public var params: [JSONMember] {
        switch target {
        case .all: [member("all", .bool(true))]
        case .paths(let paths): [member("paths", .array(paths.map { .string($0) }))]
        }
    }

    public init(params: [JSONMember], content: [UInt8]?) throws(RPCError) {
        let params = RPCParams(members: params, raw: content)
        // `all: true` wins, and `paths` is not read then; `paths: null` saves no buffer.
        if try params.optionalBool("all") == true || !params.has("paths") {
            self.init(.all)
        } else {
            self.init(.paths(try params.optionalStrings("paths") ?? []))
        }
    }

    /// `{saved: true}`.
    public struct Result: ControlAcknowledgement {
        public static var key: String { "saved" }
        public init() {}
    }
}
