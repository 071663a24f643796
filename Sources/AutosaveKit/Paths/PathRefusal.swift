import ByteNames
import SystemPackage

/// Why `PathResolver` refused a path: it leads somewhere no client may read or write.
///
/// Every case names the path as the client gave it and, where a symbolic link took it there, the
/// link (relative to the root) and what the link holds.
public enum PathRefusal: Error, Equatable, Sendable, CustomStringConvertible {
    /// Not a file's name: empty, the root or a folder spelled with `.` or `..`, a NUL byte, a
    /// component longer than 255 bytes, or a link whose target is not UTF-8.
    case malformed(path: String, reason: String)
    /// `..` climbs above the root, or an absolute path lies outside it.
    case outsideRoot(path: String)
    /// A symbolic link on the way leads outside the root.
    case linkLeadsOutside(path: String, link: String, target: String)
    /// The path leads into `.git/` (git's own files: a hook or `core.fsmonitor` written there runs
    /// on the next git command), directly or through `link`.
    case insideGit(path: String, link: Link?)
    /// The path leads into the agent's state directory (its journal, lock and socket).
    case insideStateDirectory(path: String, link: Link?)
    /// A folder of the agent's own (the state directory) holds a symbolic link where the agent
    /// keeps its files: never followed.
    case linkInAgentFolder(path: String, link: String)
    /// More links on the way than the kernel would follow (40): a loop.
    case tooManyLinks(path: String)
    /// A component on the way is a file, not a folder.
    case notAFolder(path: String, component: String)
    /// A folder on the way was swapped (for a link, say) each time the path was resolved.
    case changedWhileResolving(path: String)
    /// A system call failed while resolving (`EACCES`, `EIO`, …).
    case system(path: String, operation: String, Errno)

    /// A symbolic link on a refused path: its path relative to the root, and what it holds.
    public struct Link: Equatable, Sendable {
        public var path: String
        public var target: String
    }

    /// The path as the client named it.
    public var path: String {
        switch self {
        case .malformed(let path, _), .outsideRoot(let path), .linkLeadsOutside(let path, _, _), .insideGit(let path, _),
            .insideStateDirectory(let path, _), .linkInAgentFolder(let path, _), .tooManyLinks(let path),
            .notAFolder(let path, _), .changedWhileResolving(let path), .system(let path, _, _):
            path
        }
    }

    /// The symbolic link that led the path astray, when one did.
    public var link: Link? {
        switch self {
        case .linkLeadsOutside(_, let link, let target): Link(path: link, target: target)
        case .insideGit(_, let link), .insideStateDirectory(_, let link): link
        default: nil
        }
    }

    /// The errno a plain `open` would have met, for a refusal that is not about the walls (a
    /// file where a folder should be, a loop of links, a folder that kept changing, a failed
    /// call): a read or a save reports those as it reports any failed call, and retries.
    public var errno: Errno? {
        switch self {
        case .notAFolder: .notDirectory
        case .tooManyLinks: .tooManySymbolicLinkLevels
        case .changedWhileResolving: .resourceTemporarilyUnavailable
        case .system(_, _, let errno): errno
        default: nil
        }
    }

    /// The refusal's stable name in the protocol (`data.reason` of an error answer).
    public var code: String {
        switch self {
        case .malformed: "invalidPath"
        case .outsideRoot, .linkLeadsOutside: "outsideRoot"
        case .insideGit: "insideGit"
        case .insideStateDirectory: "insideStateDirectory"
        case .linkInAgentFolder: "linkInStateDirectory"
        case .tooManyLinks: "tooManyLinks"
        case .notAFolder: "notAFolder"
        case .changedWhileResolving: "changedWhileResolving"
        case .system: "unresolvable"
        }
    }

    public var description: String {
        func through(_ link: Link?, _ place: String) -> String {
            guard let link else { return "\(path) is inside \(place)" }
            return link.path.isSameName(as: path)
                ? "\(path) is a link to \(link.target), inside \(place)"
                : "\(path) leads inside \(place) through the link \(link.path) (to \(link.target))"
        }
        return switch self {
        case .malformed(_, let reason): "invalid path \(path): \(reason)"
        case .outsideRoot: path.isAbsolutePath ? "\(path) is outside the root" : "\(path): `..` leads outside the root"
        case .linkLeadsOutside(_, let link, let target):
            link.isSameName(as: path)
                ? "\(path) is a link to \(target), which leads outside the root"
                : "\(path) leads outside the root through the link \(link) (to \(target))"
        case .insideGit(_, let link): through(link, ".git/") + ", which is git's own: clients may not read or write it"
        case .insideStateDirectory(_, let link):
            through(link, "the agent's state directory") + ", which clients may not read or write"
        case .linkInAgentFolder(_, let link):
            "\(link) is a symbolic link inside the agent's state directory, which holds none; remove it"
        case .tooManyLinks: "\(path) passes through more than 40 symbolic links (a loop?)"
        case .notAFolder(_, let component): "\(path): \(component) is a file, not a folder"
        case .changedWhileResolving: "\(path): a folder on the way kept changing while it was resolved; try again"
        case .system(_, let operation, let errno): "\(path): \(operation): \(errno.description)"
        }
    }
}
