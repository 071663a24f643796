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

    private let owned: [IgnorePattern]
    private let patterns: [IgnorePattern]

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
    }

    /// Whether the entry `path` is ignored, given that its parent directory is not.
    ///
    /// This is what the watcher asks for each entry it meets, walking down from the root.
    public func isIgnored(_ path: String, isDirectory: Bool) -> Bool {
        let components = Array(path.utf8).split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: true)
        return isIgnored(components: components, isDirectory: isDirectory)
    }

    /// Whether `path` is ignored, itself or through any directory above it.
    public func isExcluded(_ path: String, isDirectory: Bool) -> Bool {
        let components = Array(path.utf8).split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: true)
        for depth in 1..<max(components.count, 1) where isIgnored(components: Array(components[..<depth]), isDirectory: true) {
            return true
        }
        return isIgnored(components: components, isDirectory: isDirectory)
    }

    private func isIgnored(components: [ArraySlice<UInt8>], isDirectory: Bool) -> Bool {
        guard !components.isEmpty else { return false }
        if owned.contains(where: { $0.matches(components: components, isDirectory: isDirectory) }) { return true }
        for pattern in patterns.reversed() where pattern.matches(components: components, isDirectory: isDirectory) {
            return !pattern.isNegated
        }
        return false
    }
}
