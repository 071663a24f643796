/// The configuration file's keys: their JSON paths, types, ranges and help, in file order.
///
/// One table drives decoding, error messages, `autosave config` output and the documentation
/// tests, so a key cannot be added in one place and forgotten in another.
public enum ConfigurationSchema {
    /// One leaf key of the file.
    public struct Field: Sendable {
        /// The dotted JSON path, such as `autosave.delayMs`.
        public let path: String
        /// What the value may be, for error messages ("a whole number from 0 to 3600000").
        public let allowed: String
        /// One line for the README and `examples/autosave.json`.
        public let help: String
        let decode: @Sendable (inout Configuration, JSONValue) -> String?
        let encode: @Sendable (Configuration) -> JSONValue
    }

    /// Every leaf key, in the order `autosave config` prints them.
    public static let fields: [Field] = [
        optionalText(
            "root", \.root, help: "folder to keep safe (default: the DIR argument, else the current directory)"),
        text("stateDir", \.stateDir, help: "socket, journal, conflict copies and lock; a folder inside the root, relative to it"),
        integer(
            "autosave.delayMs", \.autosave.delayMs, 0...3_600_000,
            help: "quiet time after the latest edit before a buffer is saved"),
        integer(
            "autosave.maxDelayMs", \.autosave.maxDelayMs, 0...86_400_000,
            help: "longest a dirty buffer waits under continuous edits"),
        integer(
            "watch.settleMs", \.watch.settleMs, 0...60_000,
            help: "quiet time per path before a burst of events becomes one change"),
        integer(
            "watch.maxSettleMs", \.watch.maxSettleMs, 0...3_600_000,
            help: "longest a name that is never quiet waits before its change is reported anyway"),
        patterns("watch.ignore", \.watch.ignore, help: "extra ignore patterns, .gitignore syntax"),
        integer(
            "watch.rescanIntervalS", \.watch.rescanIntervalS, 0...86_400,
            help: "seconds between rescans of unwatched directories (0: only after trouble, then 30)"),
        boolean("write.fsync", \.write.fsync, help: "fsync file and directory before a save counts as done"),
        choice("write.hardLinks", \.write.hardLinks, help: "files with several links: write in place or replace"),
        boolean("conflicts.merge", \.conflicts.merge, help: "merge non-overlapping edits line by line"),
        choice("conflicts.keep", \.conflicts.keep, help: "side that keeps the path when edits overlap"),
        integer(
            "conflicts.maxCopiesPerFile", \.conflicts.maxCopiesPerFile, 1...1_000_000,
            help: "conflict copies per file before a warning (none is ever deleted)"),
        boolean("journal.enabled", \.journal.enabled, help: "journal accepted edits so a crash loses none"),
        boolean("journal.fsync", \.journal.fsync, help: "fsync the journal before acknowledging an edit"),
        boolean("history.enabled", \.history.enabled, help: "keep every version of every file (`autosave history`)"),
        integer(
            "history.maxFileBytes", \.history.maxFileBytes, 0...(1 << 34),
            help: "largest file whose versions are kept"),
        integer(
            "history.maxBinaryBytes", \.history.maxBinaryBytes, 0...(1 << 34),
            help: "largest binary file (a NUL in its first 8000 bytes) whose versions are kept"),
        baselineChoice(
            "history.baseline", \.history.baseline,
            help: "store every file once after start-up, in the background (auto: trees up to 100,000 files and 2 GiB)"),
        integer(
            "history.maxBytes", \.history.maxBytes, (1 << 20)...(1 << 50),
            help: "size the history database is pruned under, oldest versions first"),
        integer(
            "history.maxAgeDays", \.history.maxAgeDays, 1...36_500,
            help: "days a version is kept at most (a file's latest version is always kept)"),
        integer(
            "limits.maxFileBytes", \.limits.maxFileBytes, 1...(1 << 40),
            help: "largest file a buffer may hold"),
        integer(
            "limits.maxRequestBytes", \.limits.maxRequestBytes, 1024...(1 << 34),
            help: "largest socket request"),
        integer(
            "limits.stopTimeoutMs", \.limits.stopTimeoutMs, 100...3_600_000,
            help: "longest a stop may take before the agent exits anyway (unsaved edits stay in the journal)"),
        choice("log.level", \.log.level, help: "least severe level printed"),
        choice("log.format", \.log.format, help: "text (logfmt) or json, one line per event"),
    ]

    /// The objects that group the keys (`autosave`, `watch`, …).
    public static let sections: [String] = {
        var seen: [String] = []
        for field in fields {
            guard let dot = field.path.firstIndex(of: ".") else { continue }
            let section = String(field.path[..<dot])
            if !seen.contains(section) { seen.append(section) }
        }
        return seen
    }()

    // MARK: - Field kinds

    private static func integer(
        _ path: String, _ property: WritableKeyPath<Configuration, Int>, _ range: ClosedRange<Int>,
        help: String
    ) -> Field {
        nonisolated(unsafe) let keyPath = property
        let allowed = "a whole number from \(range.lowerBound) to \(range.upperBound)"
        return Field(
            path: path, allowed: allowed, help: help,
            decode: { configuration, value in
                guard case .number(let text) = value else { return "expected \(allowed), got \(value.kindDescription)" }
                guard let number = Int(text) else {
                    return "expected \(allowed), got \(text)"
                }
                guard range.contains(number) else { return "\(number) is out of range: expected \(allowed)" }
                configuration[keyPath: keyPath] = number
                return nil
            },
            encode: { .number(String($0[keyPath: keyPath])) })
    }

    private static func boolean(
        _ path: String, _ property: WritableKeyPath<Configuration, Bool>, help: String
    ) -> Field {
        // Key paths to value-type properties are immutable; the compiler cannot prove it yet.
        nonisolated(unsafe) let keyPath = property
        return Field(
            path: path, allowed: "true or false", help: help,
            decode: { configuration, value in
                guard case .bool(let flag) = value else { return "expected true or false, got \(value.jsonText)" }
                configuration[keyPath: keyPath] = flag
                return nil
            },
            encode: { .bool($0[keyPath: keyPath]) })
    }

    private static func choice<Choice: RawRepresentable & CaseIterable & Sendable>(
        _ path: String, _ property: WritableKeyPath<Configuration, Choice>, help: String
    ) -> Field where Choice.RawValue == String {
        nonisolated(unsafe) let keyPath = property
        let names = Choice.allCases.map { "\"\($0.rawValue)\"" }
        let allowed = "one of " + names.joined(separator: ", ")
        return Field(
            path: path, allowed: allowed, help: help,
            decode: { configuration, value in
                guard case .string(let text) = value, let choice = Choice(rawValue: text) else {
                    return "expected \(allowed), got \(value.jsonText)"
                }
                configuration[keyPath: keyPath] = choice
                return nil
            },
            encode: { .string($0[keyPath: keyPath].rawValue) })
    }

    private static func baselineChoice(
        _ path: String, _ property: WritableKeyPath<Configuration, Configuration.BaselineSetting>, help: String
    ) -> Field {
        nonisolated(unsafe) let keyPath = property
        return Field(
            path: path, allowed: "\"auto\", true or false", help: help,
            decode: { configuration, value in
                switch value {
                case .string("auto"): configuration[keyPath: keyPath] = .auto
                case .bool(let flag): configuration[keyPath: keyPath] = flag ? .on : .off
                default: return "expected \"auto\", true or false, got \(value.jsonText)"
                }
                return nil
            },
            encode: { configuration in
                switch configuration[keyPath: keyPath] {
                case .auto: .string("auto")
                case .on: .bool(true)
                case .off: .bool(false)
                }
            })
    }

    private static func text(
        _ path: String, _ property: WritableKeyPath<Configuration, String>, help: String
    ) -> Field {
        // Key paths to value-type properties are immutable; the compiler cannot prove it yet.
        nonisolated(unsafe) let keyPath = property
        return Field(
            path: path, allowed: "a non-empty string", help: help,
            decode: { configuration, value in
                guard case .string(let text) = value, !text.isEmpty else {
                    return "expected a non-empty string, got \(value.jsonText)"
                }
                configuration[keyPath: keyPath] = text
                return nil
            },
            encode: { .string($0[keyPath: keyPath]) })
    }

    private static func optionalText(
        _ path: String, _ property: WritableKeyPath<Configuration, String?>, help: String
    ) -> Field {
        // Key paths to value-type properties are immutable; the compiler cannot prove it yet.
        nonisolated(unsafe) let keyPath = property
        return Field(
            path: path, allowed: "a non-empty string or null", help: help,
            decode: { configuration, value in
                switch value {
                case .null: configuration[keyPath: keyPath] = nil
                case .string(let text) where !text.isEmpty: configuration[keyPath: keyPath] = text
                default: return "expected a non-empty string or null, got \(value.jsonText)"
                }
                return nil
            },
            encode: { $0[keyPath: keyPath].map(JSONValue.string) ?? .null })
    }

    private static func patterns(
        _ path: String, _ property: WritableKeyPath<Configuration, [String]>, help: String
    ) -> Field {
        // Key paths to value-type properties are immutable; the compiler cannot prove it yet.
        nonisolated(unsafe) let keyPath = property
        return Field(
            path: path, allowed: "an array of .gitignore patterns", help: help,
            decode: { configuration, value in
                guard case .array(let items) = value else {
                    return "expected an array of .gitignore patterns, got \(value.kindDescription)"
                }
                var patterns: [String] = []
                for (index, item) in items.enumerated() {
                    guard case .string(let pattern) = item else {
                        return "item \(index) must be a string, got \(item.jsonText)"
                    }
                    if let problem = IgnorePattern.problem(in: pattern) {
                        return "item \(index) (\(JSONValue.quoted(pattern))): \(problem)"
                    }
                    patterns.append(pattern)
                }
                configuration[keyPath: keyPath] = patterns
                return nil
            },
            encode: { .array($0[keyPath: keyPath].map(JSONValue.string)) })
    }
}
