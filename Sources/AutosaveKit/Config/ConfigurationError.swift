import SystemPackage

/// Why a configuration could not be used. The agent does not start on any of these.
public enum ConfigurationError: Error, Equatable, Sendable, CustomStringConvertible {
    /// One thing wrong with one key.
    public struct Problem: Equatable, Sendable, CustomStringConvertible {
        /// The dotted JSON path of the key, `""` for the document itself.
        public var key: String
        public var message: String
        public var position: SourcePosition?

        public var description: String {
            let place = position.map { "\($0.line):\($0.column): " } ?? ""
            return key.isEmpty ? place + message : place + "`\(key)`: " + message
        }
    }

    /// The file could not be read.
    case unreadable(file: String, Errno)
    /// The file is not valid JSON.
    case syntax(file: String, JSONReader.SyntaxError)
    /// The file is JSON but some keys are unknown or have values that are not allowed.
    case invalid(file: String, [Problem])
    /// The root to watch does not exist or is not a directory.
    case rootUnavailable(path: String, Errno)

    public var description: String {
        switch self {
        case .unreadable(let file, let errno):
            "cannot read configuration \(file): \(errno.description); the agent was not started"
        case .syntax(let file, let error):
            "\(file):\(error.position.line):\(error.position.column): invalid JSON at \(error.position): "
                + "\(error.message); the agent was not started"
        case .invalid(let file, let problems):
            problems.map { "\(file):\($0.description)" }.joined(separator: "\n")
                + "\n\(problems.count == 1 ? "1 problem" : "\(problems.count) problems") in \(file); "
                + "the agent was not started (`autosave config` prints the defaults)"
        case .rootUnavailable(let path, let errno):
            "cannot keep \(path) safe: \(errno.description); the agent was not started"
        }
    }
}
