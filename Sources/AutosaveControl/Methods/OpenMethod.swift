import AutosaveKit

/// `open`: opens `path` in a buffer and answers its status.
public struct OpenMethod: ControlMethod {
    public typealias Result = BufferStatus
    public static var method: RPCMethod { .open }

    public var path: String
    /// The side that keeps the path when this buffer's edits and the disk's overlap; `.some(nil)`
    /// (`null`) for the configuration's side again; nil when not given (unchanged).
    public var keep: ConflictSide??

    public init(path: String, keep: ConflictSide?? = nil) {
        self.path = path
        self.keep = keep
    }

    public var params: [JSONMember] {
        var members = [member("path", .string(path))]
        if let keep { members.append(member("keep", keep.map { .string($0.rawValue) } ?? .null)) }
        return members
    }

    public init(params: [JSONMember], content: [UInt8]?) throws(RPCError) {
        let params = RPCParams(members: params, raw: content)
        self.init(path: try params.string("path"), keep: try params.optionalConflictSide())
    }
}
