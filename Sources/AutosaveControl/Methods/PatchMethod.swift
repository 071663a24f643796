import AutosaveKit

/// `patch`: a unified diff applied to the buffers of every file it names, all or nothing.
public struct PatchMethod: ControlMethod {
    public static var method: RPCMethod { .patch }

    public var diff: Diff
    /// `check`: change nothing, only say whether it applies.
    public var isCheck: Bool
    /// `ifRevision` applies to a patch of one file only; `changeId` is not read.
    public var change: ChangeParams

    /// The diff, in one of its two forms.
    public enum Diff: Sendable, Equatable {
        /// `patch`: the diff as text in the line.
        case text(String)
        /// `contentBytes`: the diff's raw bytes after the line. A client leaves `bytes` nil and
        /// gives them to `ControlClient.call(_:content:)`. A request the agent read always holds
        /// this case, with the diff's bytes whichever form they came in.
        case raw(bytes: [UInt8]?)
    }

    public init(diff: Diff, isCheck: Bool = false, change: ChangeParams = ChangeParams()) {
        self.diff = diff
        self.isCheck = isCheck
        self.change = change
    }

    public var params: [JSONMember] {
        var members: [JSONMember] = []
        if case .text(let text) = diff { members.append(member("patch", .string(text))) }
        members.append(member("check", .bool(isCheck)))
        return members + change.members
    }

    public init(params: [JSONMember], content: [UInt8]?) throws(RPCError) {
        let params = RPCParams(members: params, raw: content)
        let isCheck = try params.optionalBool("check") ?? false
        let client = try params.clientName()
        let diff = try params.patchText()
        self.init(
            diff: .raw(bytes: diff), isCheck: isCheck,
            change: ChangeParams(ifRevision: try params.optionalInt("ifRevision"), client: client))
    }

    /// The diff's bytes, as the agent read them.
    var bytes: [UInt8] {
        switch diff {
        case .text(let text): Array(text.utf8)
        case .raw(let bytes): bytes ?? []
        }
    }

    /// `{files: [{path, revision}], applied}`: `applied` is false after a `check`.
    public struct Result: ControlResult {
        public var files: [EditedFile]
        public var isApplied: Bool

        public init(files: [EditedFile], isApplied: Bool) {
            self.files = files
            self.isApplied = isApplied
        }

        public var json: JSONValue { .object([member("files", .array(files.map(\.json))), member("applied", .bool(isApplied))]) }

        public init(json: JSONValue) throws(RPCError) {
            let result = try RPCParams(result: json)
            var files: [EditedFile] = []
            for file in try result.array("files") { files.append(try EditedFile(json: file)) }
            self.init(files: files, isApplied: try result.bool("applied"))
        }
    }
}
