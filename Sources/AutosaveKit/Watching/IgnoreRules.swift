import ByteNames
import Inotify

/// Decides which paths of the tree the agent ignores: not watched, not reported, not saved over.
///
/// Three layers, strongest first: names the agent owns (`.git/`, the state dir, the agent's own
/// temp files) are always ignored; then the editors' droppings and the user's `watch.ignore`
/// patterns, where the last matching pattern wins, so a user may re-include a dropping with `!`.
public struct IgnoreRules: Sendable {
    /// Editor and tool droppings: vim swap and backup files, vim's write test `4913`, emacs locks
    /// and autosaves, `sed -i` temps, GLib's and macOS's temp names.
    public static let editorDroppings = [
        "*.swp", "*.swx", "*~", "4913", ".#*", "\\#*#", "sed??????", ".goutputstream-*", ".dat.nosync*",
    ]

    /// The agent's own temp files: `.<name>.autosave-<random>.tmp`, beside the file they replace.
    public static let agentTempPattern = ".*.autosave-*.tmp"

    private static let agentTemp = IgnorePattern(agentTempPattern)!

    /// Whether `name` is one of the agent's own temp files.
    public static func isAgentTempName(_ name: String) -> Bool {
        var path = MatchedPath(name: name, directory: "")
        return agentTemp.matches(&path, isDirectory: false)
    }

    private let owned: [IgnorePattern]
    private let patterns: [IgnorePattern]

    /// The file names these rules may ignore, by first and last byte, for a scan to keep every
    /// other file without asking `isIgnored`. A pattern that may end a name in anything admits
    /// every name; directory-only patterns admit none, as they never ignore a file.
    public let fileNameScreen: FileNameScreen

    /// - Parameters:
    ///   - patterns: the user's `watch.ignore`, already validated by the configuration.
    ///   - stateDirectory: the state dir relative to the root, when it lies inside the root.
    public init(patterns userPatterns: [String], stateDirectory: String?) {
        var owned = [".git/", Self.agentTempPattern].compactMap(IgnorePattern.init)
        if let state = stateDirectory, !state.isEmpty, let pattern = IgnorePattern("/" + state + "/") {
            owned.append(pattern)
        }
        self.owned = owned
        self.patterns = (Self.editorDroppings + userPatterns).compactMap(IgnorePattern.init)
        var screen = FileNameScreen()
        for pattern in owned + patterns where !pattern.isDirectoryOnly {
            screen.admit(first: pattern.requiredFirst, last: pattern.requiredLast)
        }
        fileNameScreen = screen
    }

    /// Whether the entry `name` of `directory` is ignored, given that the directory is not.
    ///
    /// This is what the watcher asks for each entry it meets, walking down from the root: most
    /// patterns look at the name alone, so no path is built for them.
    public func isIgnored(_ name: String, in directory: String, isDirectory: Bool) -> Bool {
        var path = MatchedPath(name: name, directory: directory)
        return isIgnored(&path, isDirectory: isDirectory)
    }

    /// Whether the entry `path` is ignored, given that its parent directory is not.
    public func isIgnored(_ path: String, isDirectory: Bool) -> Bool {
        let (directory, name) = Self.split(path)
        return isIgnored(name, in: directory, isDirectory: isDirectory)
    }

    /// Whether `path` is ignored, itself or through any directory above it.
    public func isExcluded(_ path: String, isDirectory: Bool) -> Bool {
        var directory = ""
        for component in path.pathComponents.dropLast() {
            if isIgnored(component, in: directory, isDirectory: true) { return true }
            directory = directory.isEmpty ? String(component) : directory + "/" + component
        }
        return isIgnored(path, isDirectory: isDirectory)
    }

    /// Whether `path` is one of the names the agent owns (`.git`, its state directory, its temp
    /// files), which nobody asking what changed ever hears of; given that its parent is not.
    public func isOwned(_ path: String, isDirectory: Bool) -> Bool {
        let (directory, name) = Self.split(path)
        var matched = MatchedPath(name: name, directory: directory)
        for index in owned.indices where owned[index].matches(&matched, isDirectory: isDirectory) { return true }
        return false
    }

    private func isIgnored(_ path: inout MatchedPath, isDirectory: Bool) -> Bool {
        guard !path.isEmpty else { return false }
        // By index: a `for pattern in` copies each pattern out, a retain and a release of its
        // strings per pattern per name, which a scan asks about every directory.
        for index in owned.indices where owned[index].matches(&path, isDirectory: isDirectory) { return true }
        for index in patterns.indices.reversed() where patterns[index].matches(&path, isDirectory: isDirectory) {
            return !patterns[index].isNegated
        }
        return false
    }

    private static func split(_ path: String) -> (String, String) {
        path.folderAndName
    }
}
