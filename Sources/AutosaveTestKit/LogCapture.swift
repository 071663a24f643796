import AutosaveKit
import Logging

/// One log record as the agent emitted it.
public struct CapturedLog: Sendable, CustomStringConvertible {
    public var level: Logger.Level
    public var event: String
    public var fields: [String: String]

    public var description: String {
        "\(level) \(event) " + fields.keys.sorted().map { "\($0)=\(fields[$0]!)" }.joined(separator: " ")
    }
}

/// A swift-log handler that records structured log records for tests to wait on.
public struct LogCapture: LogHandler {
    public var logLevel: Logger.Level = .trace
    public var metadata: Logger.Metadata = [:]
    public let records: AsyncRecorder<CapturedLog>

    public init(records: AsyncRecorder<CapturedLog> = AsyncRecorder()) {
        self.records = records
    }

    /// A logger writing into `records`.
    public static func logger(_ records: AsyncRecorder<CapturedLog>) -> Logger {
        Logger(label: "test") { _ in LogCapture(records: records) }
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var fields: [String: String] = [:]
        for (key, value) in metadata.merging(event.metadata ?? [:], uniquingKeysWith: { _, new in new }) {
            fields[key] = value.description
        }
        let record = CapturedLog(level: event.level, event: event.message.description, fields: fields)
        records.append(record)
    }
}
