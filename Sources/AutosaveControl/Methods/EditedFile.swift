import AutosaveKit

/// A file an accepted change left at a revision: the result of `write`, `edit` and `remove`, and
/// each of `patch`'s `files`. `path` is as the agent resolved it (relative to the root).
public struct EditedFile: ControlResult, Equatable {
    public var path: String
    public var revision: Int

    public init(path: String, revision: Int) {
        self.path = path
        self.revision = revision
    }

    public var json: JSONValue { .object([member("path", .string(path)), member("revision", .number(String(revision)))]) }

    public init(json: JSONValue) throws(RPCError) {
        let result = try RPCParams(result: json)
        self.init(path: try result.string("path"), revision: try result.int("revision"))
    }
}
