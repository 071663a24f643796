import ByteNames
import CAutosaveShims
import Glibc
import Synchronization
import SystemPackage

/// Resolves the paths clients name beneath the root, one component at a time, so that no
/// symbolic link — there from the start or swapped in later — leads a read or a write out of the
/// root, into `.git/`, or into the agent's state directory.
///
/// Every door goes through it: socket requests, the CLI, patch headers and MCP tools
/// (`Workspace.normalize`), journal recovery, reloads after a watcher event (`DiskVersion.read`),
/// saves (`AtomicWriter`) and conflict copies (an `agentFolder` resolver, which follows no link).
///
/// The kernel never follows a link for it: each folder is opened with `O_NOFOLLOW` — or, when no
/// link is on the way, all of them at once with `openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS)`
/// — and each link is read with `readlinkat` and followed here, and only while where it leads
/// stays beneath the root and outside the protected folders. The file is then read or replaced
/// through the descriptor of the folder that holds it, which keeps naming that folder whatever is
/// renamed over its path meanwhile.
public struct PathResolver: Sendable {
    /// The root: absolute and free of links.
    public let root: String
    /// Which symbolic links may be followed.
    public let links: LinkPolicy
    /// The state directory's components below the root; nil when it is elsewhere.
    let stateDirectory: [String]?
    /// Whether `.git` (any component so named) is out of bounds.
    let protectsGit: Bool
    /// Whether to try `openat2` first (tests turn it off to exercise the walk alone).
    let usesKernelResolution: Bool
    /// Set once `openat2` turned out missing (ENOSYS, or refused by a seccomp filter): the
    /// kernel's, so the process's.
    private static let isKernelResolutionMissing = Atomic<Bool>(false)

    /// Which symbolic links a resolver follows.
    public enum LinkPolicy: Sendable {
        /// A link is followed when where it leads is beneath the root and outside `.git/` and the
        /// state directory (the project's files).
        case followInside
        /// No link is followed (the agent's own folders, which hold none).
        case never
    }

    /// A resolver for the project's files below `root`: `.git/` and `stateDirectory` (relative to
    /// the root) are out of bounds, and links are followed only while they stay inside.
    public init(root: String, stateDirectory: String?, usesKernelResolution: Bool = true) {
        self.root = root
        self.links = .followInside
        self.stateDirectory = stateDirectory.map(\.pathComponents)
        self.protectsGit = true
        self.usesKernelResolution = usesKernelResolution
    }

    /// A resolver for a folder of the agent's own (the conflict copies): nothing in it may be a link.
    public static func agentFolder(_ folder: String) -> PathResolver {
        PathResolver(root: folder, links: .never)
    }

    private init(root: String, links: LinkPolicy) {
        self.root = root
        self.links = links
        self.stateDirectory = nil
        self.protectsGit = false
        self.usesKernelResolution = true
    }

    /// Where a path leads.
    public struct Resolution {
        /// The path as the agent names the file: the folders on the way as they are (their links
        /// followed), then the file's own name as given (a link to a file keeps its own name).
        public var key: String
        /// Where the file is; nil when a folder on the way does not exist.
        public var location: Location?
        /// The folder the file would be in (relative to the root), when it or a folder above it
        /// does not exist; nil when `location` is there.
        public var missingFolder: String?
        /// The folders made on the way (`makingFolders`), relative to the root.
        public var madeFolders: [String] = []
    }

    /// Resolves `path` (relative to the root) as the kernel would, refusing what leads out.
    ///
    /// A folder that does not exist holds no link: the rest of the path is taken as written
    /// (`..` against the name before it) and checked the same way.
    ///
    /// - Parameter makingFolders: make each missing folder on the way (mode 0777 less the umask),
    ///   durably (the folder it is made in is fsync'd), rather than stop at it.
    /// - Throws: `PathRefusal` naming the path, and the link that led it astray.
    public func resolve(_ path: String, makingFolders: Bool = false) throws(PathRefusal) -> Resolution {
        let named = path.pathComponents
        guard !path.utf8.contains(0) else { throw .malformed(path: path, reason: "it contains a NUL byte") }
        if named.contains(where: { $0.utf8.count > Self.nameLimit }) {
            throw .malformed(path: path, reason: "a component is longer than 255 bytes")
        }
        guard let last = named.last, last != ".", last != ".." else {
            throw .malformed(path: path, reason: "it names a folder (the root or one inside it), not a file")
        }
        for _ in 0..<Self.attempts {
            var walk = Walk(path: path, resolver: self, makingFolders: makingFolders)
            do {
                return try walk.run(named)
            } catch {
                switch error {
                case .swapped: continue
                case .refused(let refusal): throw refusal
                }
            }
        }
        throw .changedWhileResolving(path: path)
    }

    /// How many times a resolution starts over when a folder on the way is swapped meanwhile.
    static var attempts: Int { 4 }
    /// `NAME_MAX`.
    static var nameLimit: Int { 255 }
    /// `MAXSYMLINKS`: as many links as the kernel follows in one path before `ELOOP`.
    static var linkLimit: Int { 40 }

    // MARK: - The folders the walk opens

    /// The root, opened to read (or as a path only, when it cannot be read).
    func openRoot() throws(PathRefusal) -> CInt {
        var fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if fd < 0, errno == EACCES { fd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC) }
        guard fd >= 0 else { throw .system(path: root, operation: "open the root", Errno(rawValue: errno)) }
        return fd
    }

    /// The folder `components` below the root, every one of them a folder and none a link;
    /// nil (errno set) when that is no longer so.
    func openFolder(_ components: [String]) throws(PathRefusal) -> CInt? {
        let rootFD = try openRoot()
        guard !components.isEmpty else { return rootFD }
        if let fd = openAllAtOnce(components, in: rootFD) {
            close(rootFD)
            return fd
        }
        var current = rootFD
        for name in components {
            let next = Self.openFolder(name, in: current)
            close(current)
            guard next >= 0 else { return nil }
            current = next
        }
        return current
    }

    /// `components` opened in one `openat2` call, when the kernel has it and no link is on the way.
    func openAllAtOnce(_ components: some Collection<String>, in folder: CInt) -> CInt? {
        guard usesKernelResolution, !Self.isKernelResolutionMissing.load(ordering: .relaxed), !components.isEmpty else { return nil }
        let fd = CAutosaveShims_openBeneath(folder, components.joined(separator: "/"), O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if fd >= 0 { return fd }
        // ENOSYS before 5.6; EPERM where a seccomp filter (some containers) does not know it.
        if errno == ENOSYS || errno == EPERM { Self.isKernelResolutionMissing.store(true, ordering: .relaxed) }
        return nil
    }

    /// One folder below `folder`, never through a link: -1 with `ELOOP` when `name` is a link.
    static func openFolder(_ name: String, in folder: CInt) -> CInt {
        let fd = openat(folder, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard fd < 0, errno == EACCES else { return fd }
        // A folder we may enter but not list: enough to reach the file, not to fsync the folder.
        return openat(folder, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
    }

    /// What the link `name` in `folder` holds; nil when it is not UTF-8 (no path a client can name
    /// could spell it) — `.swapped` when it is no longer a link.
    static func linkTarget(_ name: String, in folder: CInt) throws(WalkFailure) -> String? {
        var buffer = [UInt8](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = buffer.withUnsafeMutableBufferPointer {
            $0.withMemoryRebound(to: CChar.self) { readlinkat(folder, name, $0.baseAddress!, $0.count - 1) }
        }
        guard count >= 0 else {
            if errno == EINVAL || errno == ENOENT { throw .swapped }
            throw .refused(.system(path: name, operation: "read link", Errno(rawValue: errno)))
        }
        return String(validating: buffer[..<count], as: UTF8.self)
    }

    /// Why one walk stopped: refused for good, or a folder swapped under it (start again).
    enum WalkFailure: Error {
        case refused(PathRefusal)
        case swapped
    }
}

/// A file's place beneath the root, as `PathResolver` found it: the folder that holds it, open,
/// and its name there. The folder's descriptor is closed with the value.
public final class Location: Sendable {
    /// The folder, opened `O_RDONLY | O_DIRECTORY` (or `O_PATH` when it cannot be read).
    public let folder: CInt
    /// The file's name in `folder`.
    public let name: String
    /// The file's path relative to the root after every link: the file a write changes.
    public let path: String

    init(folder: CInt, name: String, path: String) {
        self.folder = folder
        self.name = name
        self.path = path
    }

    deinit { close(folder) }
}
