import AutosaveKit

/// `shutdown`: saves every dirty buffer, answers where every edit went, then the agent stops.
public struct ShutdownMethod: ParameterlessMethod {
    public static var method: RPCMethod { .shutdown }

    public init() {}

    /// `{stopping: true, saved, copied: [{path, copy}], lost}`.
    public struct Result: ControlResult {
        public var outcome: FlushOutcome

        public init(_ outcome: FlushOutcome) {
            self.outcome = outcome
        }

        public var json: JSONValue {
            .object([
                member("stopping", .bool(true)), member("saved", .number(String(outcome.saved))),
                member("copied", .array(outcome.copied.map { .object([member("path", .string($0.path)), member("copy", .string($0.copy))]) })),
                member("lost", .array(outcome.lost.map { .string($0) })),
            ])
        }

        public init(json: JSONValue) throws(RPCError) {
            let result = try RPCParams(result: json)
            var outcome = FlushOutcome()
            outcome.saved = try result.int("saved")
            for copied in try result.array("copied") {
                let copied = try RPCParams(result: copied)
                outcome.copied.append(FlushOutcome.Copied(path: try copied.string("path"), copy: try copied.string("copy")))
            }
            outcome.lost = try result.strings("lost")
            self.init(outcome)
        }
    }
}
