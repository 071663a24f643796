import Foundation
import Logging

/// Formats one log record as the agent prints it, in `text` (logfmt) or `json`.
///
/// The first word of a text line after the level, and the `event` field of a JSON line, is the
/// event name (`saved`, `external-change`, …): an interface scripts depend on.
public enum LogLine {
    /// Keys printed first, in this order, so related lines line up; the rest follow sorted.
    static let leadingKeys = ["root", "path", "from", "to", "kind", "directory", "revision", "bytes"]
    /// Keys printed last: the measurement, then what failed and what happens next.
    static let trailingKeys = ["ms", "error", "next"]

    /// Renders a record.
    public static func render(
        format: LogFormat, timestamp: Date, level: Logger.Level, event: String, fields: Logger.Metadata
    ) -> String {
        let keys = orderedKeys(fields)
        let stamp = timestampText(timestamp)
        switch format {
        case .text:
            var line = "\(stamp) \(level.rawValue) \(event)"
            for key in keys {
                line += " \(key)=\(logfmtValue(fields[key]!.description))"
            }
            return line
        case .json:
            var members = [
                JSONMember(key: "ts", value: .string(stamp), position: .init(line: 0, column: 0)),
                JSONMember(key: "level", value: .string(level.rawValue), position: .init(line: 0, column: 0)),
                JSONMember(key: "event", value: .string(event), position: .init(line: 0, column: 0)),
            ]
            for key in keys where !["ts", "level", "event"].contains(key) {
                members.append(JSONMember(key: key, value: jsonValue(fields[key]!), position: .init(line: 0, column: 0)))
            }
            return JSONValue.object(members).jsonText
        }
    }

    static func orderedKeys(_ fields: Logger.Metadata) -> [String] {
        let leading = leadingKeys.filter { fields[$0] != nil }
        let trailing = trailingKeys.filter { fields[$0] != nil }
        let middle = fields.keys.filter { !leadingKeys.contains($0) && !trailingKeys.contains($0) }.sorted()
        return leading + middle + trailing
    }

    /// A logfmt value: bare when it is a plain token, quoted with escapes otherwise.
    static func logfmtValue(_ text: String) -> String {
        let isPlain = !text.isEmpty && text.unicodeScalars.allSatisfy { scalar in
            scalar.value > 0x20 && scalar.value < 0x7F && scalar != "\"" && scalar != "=" && scalar != "\\"
        }
        return isPlain ? text : JSONValue.quoted(text)
    }

    private static func jsonValue(_ value: Logger.MetadataValue) -> JSONValue {
        switch value {
        case .string(let text):
            // Numbers and Booleans are logged as strings by swift-log; print them as JSON values.
            if text == "true" || text == "false" { return .bool(text == "true") }
            if isJSONNumber(text) { return .number(text) }
            return .string(text)
        case .stringConvertible(let value):
            let text = value.description
            if value is Bool { return .bool(text == "true") }
            if isJSONNumber(text) { return .number(text) }
            return .string(text)
        case .array(let items): return .array(items.map(jsonValue))
        case .dictionary(let dictionary):
            return .object(dictionary.keys.sorted().map {
                JSONMember(key: $0, value: jsonValue(dictionary[$0]!), position: .init(line: 0, column: 0))
            })
        }
    }

    private static func isJSONNumber(_ text: String) -> Bool {
        guard !text.isEmpty, text.count < 32 else { return false }
        guard case .number = try? JSONReader.parse(Array(text.utf8)) else { return false }
        return true
    }

    /// `2026-11-21T22:00:00.123Z`.
    static func timestampText(_ date: Date) -> String {
        let milliseconds = Int64((date.timeIntervalSince1970 * 1000).rounded(.down))
        var seconds = time_t(milliseconds / 1000)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        let millis = Int(milliseconds % 1000)
        let fraction = millis < 10 ? "00\(millis)" : millis < 100 ? "0\(millis)" : "\(millis)"
        return "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday))T"
            + "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)).\(fraction)Z"
    }
}
