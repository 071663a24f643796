import FoundationEssentials
import Glibc
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
    ///
    /// Every `saved` and `external-change` is rendered on the path that reports it, so the line
    /// is appended into one string, with no intermediate JSON tree.
    public static func render(
        format: LogFormat, timestamp: Date, level: Logger.Level, event: String, fields: Logger.Metadata
    ) -> String {
        let keys = orderedKeys(fields)
        var line = ""
        line.reserveCapacity(96 + fields.count * 24)
        switch format {
        case .text:
            appendTimestamp(timestamp, to: &line)
            line += " "
            line += level.rawValue
            line += " "
            line += event
            for key in keys {
                line += " "
                line += key
                line += "="
                line += logfmtValue(fields[key]!.description)
            }
        case .json:
            line += "{\"ts\":\""
            appendTimestamp(timestamp, to: &line)
            line += "\",\"level\":\""
            line += level.rawValue
            line += "\",\"event\":"
            JSONValue.appendQuoted(event, to: &line)
            for key in keys where key != "ts" && key != "level" && key != "event" {
                line += ","
                JSONValue.appendQuoted(key, to: &line)
                line += ":"
                appendJSON(fields[key]!, to: &line)
            }
            line += "}"
        }
        return line
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

    /// Appends a field's value as JSON, arrays and dictionaries (keys sorted) included.
    private static func appendJSON(_ value: Logger.MetadataValue, to line: inout String) {
        switch value {
        case .string(let text):
            appendScalar(text, isBool: text == "true" || text == "false", to: &line)
        case .stringConvertible(let value):
            appendScalar(value.description, isBool: value is Bool, to: &line)
        case .array(let items):
            line += "["
            for (index, item) in items.enumerated() {
                if index > 0 { line += "," }
                appendJSON(item, to: &line)
            }
            line += "]"
        case .dictionary(let dictionary):
            line += "{"
            for (index, key) in dictionary.keys.sorted().enumerated() {
                if index > 0 { line += "," }
                JSONValue.appendQuoted(key, to: &line)
                line += ":"
                appendJSON(dictionary[key]!, to: &line)
            }
            line += "}"
        }
    }

    /// Numbers and Booleans, which swift-log carries as strings, go bare; anything else quoted.
    private static func appendScalar(_ text: String, isBool: Bool, to line: inout String) {
        if isBool || isJSONNumber(text) { line += text } else { JSONValue.appendQuoted(text, to: &line) }
    }

    /// Whether `text` is a JSON number: `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`.
    static func isJSONNumber(_ text: String) -> Bool {
        var bytes = text.utf8[...]
        func digits() -> Int {
            let count = bytes.prefix { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }.count
            bytes = bytes.dropFirst(count)
            return count
        }
        guard bytes.count < 32 else { return false }
        if bytes.first == UInt8(ascii: "-") { bytes = bytes.dropFirst() }
        if bytes.first == UInt8(ascii: "0") {
            bytes = bytes.dropFirst()
        } else if digits() == 0 {
            return false
        }
        if bytes.first == UInt8(ascii: ".") {
            bytes = bytes.dropFirst()
            guard digits() > 0 else { return false }
        }
        if bytes.first == UInt8(ascii: "e") || bytes.first == UInt8(ascii: "E") {
            bytes = bytes.dropFirst()
            if bytes.first == UInt8(ascii: "+") || bytes.first == UInt8(ascii: "-") { bytes = bytes.dropFirst() }
            guard digits() > 0 else { return false }
        }
        return bytes.isEmpty
    }

    /// Appends `2026-11-21T22:00:00.123Z` (UTC, milliseconds).
    static func appendTimestamp(_ date: Date, to line: inout String) {
        let milliseconds = Int64((date.timeIntervalSince1970 * 1000).rounded(.down))
        var seconds = time_t(milliseconds / 1000)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        line += String(unsafeUninitializedCapacity: 24) { buffer in
            var index = 0
            func put(_ value: Int, width: Int, then separator: Unicode.Scalar) {
                var rest = value
                for position in stride(from: width - 1, through: 0, by: -1) {
                    buffer[index + position] = UInt8(ascii: "0") + UInt8(rest % 10)
                    rest /= 10
                }
                buffer[index + width] = UInt8(ascii: separator)
                index += width + 1
            }
            put(Int(parts.tm_year) + 1900, width: 4, then: "-")
            put(Int(parts.tm_mon) + 1, width: 2, then: "-")
            put(Int(parts.tm_mday), width: 2, then: "T")
            put(Int(parts.tm_hour), width: 2, then: ":")
            put(Int(parts.tm_min), width: 2, then: ":")
            put(Int(parts.tm_sec), width: 2, then: ".")
            put(Int(milliseconds % 1000), width: 3, then: "Z")
            return index
        }
    }
}
