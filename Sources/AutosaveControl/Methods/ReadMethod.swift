import AutosaveKit
import FoundationEssentials

/// `read`: the buffer's content as people see it, unsaved edits included.
public struct ReadMethod: ControlMethod {
    public static var method: RPCMethod { .read }

    public var path: String
    /// Whether the content comes as raw bytes after the answer's line (`contentBytes`).
    public var isRaw: Bool

    public init(path: String, isRaw: Bool = false) {
        self.path = path
        self.isRaw = isRaw
    }

    public var params: [JSONMember] { [member("path", .string(path)), member("raw", .bool(isRaw))] }

    public init(params: [JSONMember], content: [UInt8]?) throws(RPCError) {
        let params = RPCParams(members: params, raw: content)
        self.init(path: try params.string("path"), isRaw: try params.optionalBool("raw") ?? false)
    }

    /// `{path, revision}` and the content: `content`, `contentBase64`, `contentBytes` (raw bytes
    /// after the line), or `exists: false` when there is no file and no buffer that makes one.
    public struct Result: ControlResult {
        public var path: String
        public var revision: Int
        public var content: Content

        /// How the content came.
        public enum Content: Sendable, Equatable {
            /// `exists: false`: no file, and no buffer that makes one.
            case missing
            /// `content`: UTF-8 text.
            case text(String)
            /// `contentBase64`: bytes that are not UTF-8.
            case bytes([UInt8])
            /// `contentBytes`: this many raw bytes follow the answer's line.
            case raw(count: Int)
        }

        public init(path: String, revision: Int, content: Content) {
            self.path = path
            self.revision = revision
            self.content = content
        }

        public var json: JSONValue {
            var members = [member("path", .string(path)), member("revision", .number(String(revision)))]
            switch content {
            case .missing: members.append(member("exists", .bool(false)))
            case .raw(let count): members.append(member("contentBytes", .number(String(count))))
            case .text(let text): members.append(member("content", .string(text)))
            case .bytes(let bytes): members.append(member("contentBase64", .string(Data(bytes).base64EncodedString())))
            }
            return .object(members)
        }

        public init(json: JSONValue) throws(RPCError) {
            let result = try RPCParams(result: json)
            let content: Content
            if try result.optionalBool("exists") == false {
                content = .missing
            } else if let count = try result.optionalInt("contentBytes") {
                content = .raw(count: count)
            } else if let text = try result.optionalString("content") {
                content = .text(text)
            } else {
                guard let data = Data(base64Encoded: try result.string("contentBase64")) else {
                    throw .invalidParams("`contentBase64` is not valid base64")
                }
                content = .bytes(Array(data))
            }
            self.init(path: try result.string("path"), revision: try result.int("revision"), content: content)
        }
    }
}
