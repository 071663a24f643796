import ByteNames
import FoundationEssentials
import Glibc
import SystemPackage

/// The configuration in force for one run, with the root and state dir resolved to absolute paths.
public struct ResolvedConfiguration: Sendable, Equatable {
    public var configuration: Configuration
    /// The absolute, symlink-free root.
    public var root: String
    /// The absolute state directory.
    public var stateDirectory: String
    /// The file it came from; nil for the built-in defaults.
    public var file: String?

    public init(configuration: Configuration, root: String, stateDirectory: String, file: String?) {
        self.configuration = configuration
        self.root = root
        self.stateDirectory = stateDirectory
        self.file = file
    }

    /// The state directory relative to the root, when it lies inside it.
    public var stateDirectoryInsideRoot: String? {
        stateDirectory.pathBelow(root)
    }

    /// The same configuration for the root renamed to `newRoot`: a state directory inside the
    /// root moved with it, and so did a configuration file inside it.
    public func moved(to newRoot: String) -> ResolvedConfiguration {
        func relocated(_ path: String) -> String {
            path.pathBelow(root).map { newRoot + "/" + $0 } ?? path
        }
        return ResolvedConfiguration(
            configuration: configuration, root: newRoot, stateDirectory: relocated(stateDirectory), file: file.map(relocated))
    }

    /// Finds and reads the configuration for a run.
    ///
    /// The file is `configFile` when given, else `DIR/autosave.json` (DIR being `directory` or the
    /// current directory) when it exists, else the built-in defaults. The root is `directory`
    /// when given, else the file's `root` (relative to the file's folder), else the current
    /// directory.
    /// - Throws: `ConfigurationError` for an unreadable or invalid file or a missing root.
    public static func load(
        directory: String?, configFile: String?, currentDirectory: String = FileManager.default.currentDirectoryPath
    ) throws(ConfigurationError) -> ResolvedConfiguration {
        let base = directory.map { absolute($0, from: currentDirectory) } ?? currentDirectory
        var file = configFile.map { absolute($0, from: currentDirectory) }
        if file == nil, FileManager.default.fileExists(atPath: base + "/autosave.json") {
            file = base + "/autosave.json"
        }
        var configuration = Configuration()
        if let file {
            let bytes: [UInt8]
            do { bytes = try FileContents.read(file) } catch { throw .unreadable(file: file, error) }
            configuration = try Configuration.decode(bytes, file: file)
        }
        var root = base
        if directory == nil, let configured = configuration.root {
            let folder = file.map { PathText.parent(of: $0) } ?? currentDirectory
            root = absolute(configured, from: folder)
        }
        guard let real = realpath(root, nil) else { throw .rootUnavailable(path: root, Errno(rawValue: errno)) }
        root = String(cString: real)
        free(real)
        var status = stat()
        guard stat(root, &status) == 0, (status.st_mode & S_IFMT) == S_IFDIR else {
            throw .rootUnavailable(path: root, .notDirectory)
        }
        let state = absolute(configuration.stateDir, from: root)
        // The state dir must be the agent's own folder inside the root: the root itself or a folder
        // above it would put the lock and journal among the user's files, and be watched.
        guard state.pathBelow(root) != nil else {
            throw .invalid(
                file: file ?? "the built-in defaults",
                [.init(
                    key: "stateDir",
                    message: "\"\(configuration.stateDir)\" leads to \(state), which is not a folder strictly inside the root "
                        + "\(root); name one inside it, such as \".autosave\"",
                    position: nil)])
        }
        return ResolvedConfiguration(configuration: configuration, root: root, stateDirectory: state, file: file)
    }

    /// The effective configuration as `autosave config` prints it: every key, root resolved.
    public var effectiveJSON: String {
        var shown = configuration
        shown.root = root
        return shown.jsonValue.prettyText()
    }

    private static func absolute(_ path: String, from base: String) -> String {
        let joined = path.isAbsolutePath ? path : base + "/" + path
        return PathText.normalized(joined)
    }
}
