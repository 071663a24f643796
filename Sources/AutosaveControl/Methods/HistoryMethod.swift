import AutosaveHistory
import AutosaveKit

/// `history`: the versions of a file (following it across moves), or of every file below a
/// folder, newest first; with `deleted`, the files below a folder whose latest version is their
/// removal (what `restore` can bring back).
public struct HistoryMethod: ControlMethod {
    public static var method: RPCMethod { .history }

    /// How the versions are written in the result.
    public enum Form: String, Sendable {
        /// `{versions: [{version, path, …}]}`: an object a version, every member named.
        case objects
        /// `{rows: [[version, path, timeMs, …]]}`: an array a version, its members in the order of
        /// `Version.rowColumns`; half the bytes of `objects` to write, send and read, for a
        /// client (the CLI) listing thousands.
        case rows
    }

    /// A file or a folder, relative to the root; "" (or absent) for the whole tree.
    public var path: String
    /// At most this many versions.
    public var limit: Int?
    /// Only removed files that can be brought back.
    public var isDeletedOnly: Bool
    /// How the result is written; `objects` unless asked (what clients before `rows` read).
    public var form: Form

    public init(path: String = "", limit: Int? = nil, isDeletedOnly: Bool = false, form: Form = .objects) {
        self.path = path
        self.limit = limit
        self.isDeletedOnly = isDeletedOnly
        self.form = form
    }

    public var params: [JSONMember] {
        var members = [member("path", .string(path))]
        if let limit { members.append(member("limit", .number(String(limit)))) }
        if isDeletedOnly { members.append(member("deleted", .bool(true))) }
        if form != .objects { members.append(member("form", .string(form.rawValue))) }
        return members
    }

    public init(params: [JSONMember], content: [UInt8]?) throws(RPCError) {
        let params = RPCParams(members: params)
        let limit = try params.optionalInt("limit")
        if let limit, limit < 1 { throw .invalidParams("`limit` must be at least 1, got \(limit)") }
        let formName = try params.optionalString("form") ?? Form.objects.rawValue
        guard let form = Form(rawValue: formName) else { throw .invalidParams("`form` must be \"objects\" or \"rows\", got \"\(formName)\"") }
        self.init(
            path: try params.optionalString("path") ?? "", limit: limit, isDeletedOnly: try params.optionalBool("deleted") ?? false,
            form: form)
    }

    /// `{versions: [...]}` or `{rows: [...]}`, newest first.
    public struct Result: ControlResult {
        public var versions: [Version]
        /// How `json` and `write(to:)` give the versions.
        public var form: Form

        public init(versions: [Version], form: Form = .objects) {
            self.versions = versions
            self.form = form
        }

        public var json: JSONValue {
            switch form {
            case .objects: .object([member("versions", .array(versions.map(\.json)))])
            case .rows: .object([member("rows", .array(versions.map(\.row)))])
            }
        }

        /// Reads the value as `init(reading:)` reads its text: one reader of versions.
        public init(json: JSONValue) throws(RPCError) {
            self = try json.read { reader throws(JSONReader.SyntaxError) in try Result(reading: &reader) }
        }

        /// `json`'s text, each version written straight from its fields.
        public func write(to writer: inout JSONWriter) {
            // Taken, not shared: the text grows in place.
            var text = Text(form: form, writer: consume writer)
            for version in versions { text.append(version) }
            writer = text.finished()
        }

        /// A result's text written a version at a time: the agent writes its answer as the
        /// versions are read, with no list of them held.
        public struct Text: Sendable {
            private var writer: JSONWriter
            private let form: Form
            private var isEmpty = true

            /// Opens the result in `writer`, after what it holds.
            public init(form: Form, writer: JSONWriter = JSONWriter(capacity: 1 << 16)) {
                self.writer = writer
                self.form = form
                self.writer.raw(form == .objects ? #"{"versions":["# : #"{"rows":["#)
            }

            /// Writes the next version, newest first.
            public mutating func append(_ version: Version) {
                if !isEmpty { writer.raw(",") }
                isEmpty = false
                switch form {
                case .objects: version.write(to: &writer)
                case .rows: version.writeRow(to: &writer)
                }
            }

            /// Closes the result: the writer, with its text whole.
            public consuming func finished() -> JSONWriter {
                writer.raw("]}")
                return writer
            }
        }

        /// Reads either form straight from the text (an agent from before `rows` answers with
        /// `versions` whatever was asked); other members are passed over, as before.
        public init(reading reader: inout JSONReader) throws(JSONReader.SyntaxError) {
            var found: (versions: [Version], form: Form)?
            try reader.readObject { reader, key, _ throws(JSONReader.SyntaxError) in
                guard let form = key == "versions" ? Form.objects : key == "rows" ? Form.rows : nil else { return try reader.skipValue() }
                // Room for about as many as the rest of the text holds, so the list is rarely
                // copied as it grows; pages never written cost nothing.
                var versions: [Version] = []
                versions.reserveCapacity(reader.remainingByteCount / (form == .objects ? 128 : 48))
                try reader.readArray { reader throws(JSONReader.SyntaxError) in
                    versions.append(form == .objects ? try Version(reading: &reader) : try Version(readingRow: &reader))
                }
                found = (versions, form)
            }
            guard let found else { throw reader.failure("missing `versions` (an array)") }
            self.init(versions: found.versions, form: found.form)
        }
    }
}
