import AutosaveHistory
import AutosaveKit

/// `forget`: removes every version of a file (under the names it had before it moved too), or of
/// every file below a folder, from history, and their bytes from the database's files: for a
/// secret written by mistake. Bytes that versions of another path also hold stay; the file itself
/// is not touched.
public struct ForgetMethod: ControlMethod {
    public static var method: RPCMethod { .forget }

    /// A file or a folder, resolved as `history` resolves it; never the whole tree.
    public var path: String

    public init(path: String) {
        self.path = path
    }

    public var params: [JSONMember] { [member("path", .string(path))] }

    public init(params: [JSONMember], content: [UInt8]?) throws(RPCError) {
        let params = RPCParams(members: params)
        let path = try params.string("path")
        guard !path.isEmpty else {
            throw .invalidParams("`path` must name a file or folder; to forget every version, stop the agent and delete its history.sqlite")
        }
        self.init(path: path)
    }

    /// `{path, versions, contents, sharedContents, bytes}`: what was removed, and the database's size after.
    public struct Result: ControlResult {
        /// The path forgotten, relative to the root.
        public var path: String
        /// Versions removed.
        public var versions: Int
        /// Contents deleted with their bytes.
        public var contents: Int
        /// Contents that stay because versions of other paths hold the same bytes.
        public var sharedContents: Int
        /// The database's size afterwards, in bytes.
        public var bytes: Int

        public init(_ report: ForgetReport) {
            self.init(
                path: report.path, versions: report.versions, contents: report.contents, sharedContents: report.sharedContents,
                bytes: Int(report.bytesAfter))
        }

        public init(path: String, versions: Int, contents: Int, sharedContents: Int, bytes: Int) {
            self.path = path
            self.versions = versions
            self.contents = contents
            self.sharedContents = sharedContents
            self.bytes = bytes
        }

        public var json: JSONValue {
            .object([
                member("path", .string(path)), member("versions", .number(String(versions))),
                member("contents", .number(String(contents))), member("sharedContents", .number(String(sharedContents))),
                member("bytes", .number(String(bytes))),
            ])
        }

        public init(json: JSONValue) throws(RPCError) {
            let fields = try RPCParams(result: json)
            self.init(
                path: try fields.string("path"), versions: try fields.int("versions"), contents: try fields.int("contents"),
                sharedContents: try fields.int("sharedContents"), bytes: try fields.int("bytes"))
        }
    }
}
