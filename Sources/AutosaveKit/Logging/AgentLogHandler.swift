import FoundationEssentials
import Glibc
import Logging

/// The agent's swift-log handler: one line per record on standard error (or another sink).
///
/// The log message is the event name and the metadata its fields, so
/// `logger.info("saved", metadata: ["path": "a.txt"])` prints `… info saved path=a.txt`.
public struct AgentLogHandler: LogHandler {
    public var logLevel: Logger.Level
    public var metadata: Logger.Metadata = [:]
    private let format: LogFormat
    private let sink: @Sendable (String) -> Void

    /// - Parameters:
    ///   - sink: receives each rendered line without its newline; standard error by default.
    public init(level: LogLevel, format: LogFormat, sink: @escaping @Sendable (String) -> Void = AgentLogHandler.standardError) {
        self.logLevel = level.swiftLogLevel
        self.format = format
        self.sink = sink
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var fields = metadata
        if let extra = event.metadata { fields.merge(extra) { _, new in new } }
        sink(LogLine.render(format: format, timestamp: Date(), level: event.level, event: event.message.description, fields: fields))
    }

    /// Writes a line to standard error with one `write`, so concurrent lines never interleave.
    public static let standardError: @Sendable (String) -> Void = { line in
        var bytes = Array((line + "\n").utf8)
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeMutableBytes { Glibc.write(2, $0.baseAddress! + offset, $0.count - offset) }
            guard written > 0 else { return }
            offset += written
        }
    }
}

extension LogLevel {
    /// The swift-log level of the same name.
    public var swiftLogLevel: Logger.Level {
        switch self {
        case .trace: .trace
        case .debug: .debug
        case .info: .info
        case .notice: .notice
        case .warning: .warning
        case .error: .error
        }
    }
}
