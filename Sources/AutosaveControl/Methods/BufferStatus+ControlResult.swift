import AutosaveKit

/// A buffer's status as `open` answers it and `status` lists it:
/// `{path, revision, dirty, saving, bytes, pendingSaveMs}`.
extension BufferStatus: ControlResult {
    public var json: JSONValue {
        .object([
            member("path", .string(path)), member("revision", .number(String(revision))),
            member("dirty", .bool(isDirty)), member("saving", .bool(isSaving)),
            member("bytes", bytes.map { .number(String($0)) } ?? .null),
            member("pendingSaveMs", pendingSaveInMilliseconds.map { .number(String($0)) } ?? .null),
        ])
    }

    public init(json: JSONValue) throws(RPCError) {
        let result = try RPCParams(result: json)
        self.init(
            path: try result.string("path"), revision: try result.int("revision"), isDirty: try result.bool("dirty"),
            isSaving: try result.bool("saving"), pendingSaveInMilliseconds: try result.optionalInt("pendingSaveMs"),
            bytes: try result.optionalInt("bytes"))
    }
}
