import AutosaveKit

/// `status`: the root, the open buffers, the conflict copies and the watcher's figures.
public struct StatusMethod: ParameterlessMethod {
    public static var method: RPCMethod { .status }

    public init() {}

    /// `{root, buffers, conflicts, watcher}`.
    public struct Result: ControlResult {
        public var root: String
        /// Each open buffer's status, as `open` answers it.
        public var buffers: [BufferStatus]
        /// Conflict copies in the state directory.
        public var conflicts: Int
        public var watcher: WatcherStatus

        public init(root: String, buffers: [BufferStatus], conflicts: Int, watcher: WatcherStatus) {
            self.root = root
            self.buffers = buffers
            self.conflicts = conflicts
            self.watcher = watcher
        }

        public var json: JSONValue {
            .object([
                member("root", .string(root)), member("buffers", .array(buffers.map(\.json))),
                member("conflicts", .number(String(conflicts))),
                member("watcher", .object([
                    member("files", .number(String(watcher.files))),
                    member("pendingChanges", .number(String(watcher.pendingChanges))),
                    member("reportedChanges", .number(String(watcher.reportedChanges))),
                    member("heldForWriters", .number(String(watcher.heldForWriters))),
                ])),
            ])
        }

        public init(json: JSONValue) throws(RPCError) {
            let result = try RPCParams(result: json)
            var buffers: [BufferStatus] = []
            for buffer in try result.array("buffers") { buffers.append(try BufferStatus(json: buffer)) }
            let watcher = try RPCParams(result: try result.value("watcher", describedAs: "an object"))
            self.init(
                root: try result.string("root"), buffers: buffers, conflicts: try result.int("conflicts"),
                watcher: WatcherStatus(
                    files: try watcher.int("files"), pendingChanges: try watcher.int("pendingChanges"),
                    reportedChanges: try watcher.int("reportedChanges"), heldForWriters: try watcher.int("heldForWriters")))
        }
    }
}
