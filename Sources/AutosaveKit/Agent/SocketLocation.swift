import ByteNames
import FoundationEssentials
import Glibc
import Logging

/// Where the control socket is bound: always in a directory only the agent's user can enter,
/// never under a fixed name in a directory others may write to.
///
/// The place is, first that fits in `sun_path` (107 bytes) and passes `SocketDirectory.verify`:
/// 1. `<stateDir>/agent.sock` (the state directory is made 0700 with the lock);
/// 2. `$XDG_RUNTIME_DIR/autosave-<hash of the root>.sock`;
/// 3. `$TMPDIR/autosave-<uid>/autosave-<hash>.sock`, the directory made 0700 when missing
///    (`/tmp` when `TMPDIR` is unset or lets others rename what is in it);
/// 4. when another user made that directory first (or it is not private), a directory of this
///    run's own, `mkdtemp("$TMPDIR/autosave-<uid>-XXXXXX")`, removed by `release()`.
/// A place other than the first is written in the pointer file `<stateDir>/agent.sock.path`,
/// where clients read it; every place passed over for a reason other than length is logged
/// (`socket-dir-ignored`, with its owner when it is another user's).
public struct SocketLocation: Sendable, Equatable {
    /// The longest socket path `sun_path` holds.
    public static let maximumLength = 107
    /// The socket's name in the state directory.
    public static let socketName = "agent.sock"
    /// The pointer file's name in the state directory.
    public static let pointerName = "agent.sock.path"

    /// The socket's path, as clients connect to it.
    public let path: String
    /// The pointer file that names `path`, when the socket is not in the state directory.
    public let pointer: String?
    /// The directory made for this run only (the fourth place), removed by `release()`.
    public let runDirectory: String?

    /// Why no place could be found for the socket.
    public enum Failure: Error, Equatable, CustomStringConvertible {
        /// No place fits and is private; each place tried, with why it was passed over.
        case nowhere([String])
        /// The socket's place could not be written in the pointer file, so clients could not find it.
        case pointerNotWritten(path: String, reason: String)

        public var description: String {
            switch self {
            case .nowhere(let reasons):
                "no private directory for the control socket (\(reasons.joined(separator: "; "))); "
                    + "set XDG_RUNTIME_DIR to a directory of yours with mode 0700, or give the root a shorter path"
            case .pointerNotWritten(let path, let reason):
                "cannot write \(path), which tells clients where the socket is: \(reason)"
            }
        }
    }

    /// Picks the socket's place for the agent of `root` whose state directory is `stateDirectory`
    /// (made by the lock already), making the private directory it needs, and writes or removes
    /// the pointer file to match.
    ///
    /// - Parameter environment: where `XDG_RUNTIME_DIR` and `TMPDIR` are read.
    /// - Throws: `Failure.nowhere` when no place is private and short enough,
    ///   `Failure.pointerNotWritten` when the pointer file cannot be written.
    public static func make(
        stateDirectory: String, root: String, environment: [String: String] = ProcessInfo.processInfo.environment,
        logger: Logger
    ) throws(Failure) -> SocketLocation {
        var search = Search(fileName: "autosave-\(String(ContentDigest.of(Array(root.utf8)), radix: 16)).sock")
        let pointer = stateDirectory + "/" + pointerName
        let preferred = stateDirectory + "/" + socketName
        if search.fits(preferred), search.accepts(stateDirectory, as: "the state directory") {
            unlink(pointer)
            return SocketLocation(path: preferred, pointer: nil, runDirectory: nil)
        }
        let found = search.elsewhere(runtime: environment["XDG_RUNTIME_DIR"], temporary: environment["TMPDIR"])
        for (directory, reason) in search.ignored {
            logger.warning(
                "socket-dir-ignored",
                metadata: [
                    "path": "\(directory)", "error": "\(reason)",
                    "next": "\(found.map { "the socket is \($0.path) instead" } ?? "no other place either: not starting")",
                ])
        }
        guard let found else { throw .nowhere(search.ignored.map { "\($0.path): \($0.reason)" }) }
        try writePointer(pointer, naming: found.path)
        return SocketLocation(path: found.path, pointer: pointer, runDirectory: found.runDirectory)
    }

    /// Removes what `make` left that only this run needed, once the socket is closed: the pointer
    /// file when it still names this socket, and the directory made for this run (the socket file
    /// itself is the server's to remove). Best effort: what cannot be removed stays.
    public func release() {
        if let pointer, let named = try? String(contentsOfFile: pointer, encoding: .utf8), named.trimmingWhitespace().isSameName(as: path) {
            unlink(pointer)
        }
        if let runDirectory {
            unlink(path)
            rmdir(runDirectory)
        }
    }

    /// Writes the pointer file through a temporary name and a rename, so a client never reads half
    /// a path, and never through a symbolic link planted at either name.
    private static func writePointer(_ pointer: String, naming socket: String) throws(Failure) {
        let temporary = pointer + ".new"
        unlink(temporary)
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw .pointerNotWritten(path: pointer, reason: String(cString: strerror(errno))) }
        let bytes = Array((socket + "\n").utf8)
        let written = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        let code = errno
        close(fd)
        guard written == bytes.count else {
            unlink(temporary)
            throw .pointerNotWritten(path: pointer, reason: written < 0 ? String(cString: strerror(code)) : "short write")
        }
        guard rename(temporary, pointer) == 0 else {
            let reason = String(cString: strerror(errno))
            unlink(temporary)
            throw .pointerNotWritten(path: pointer, reason: reason)
        }
    }
}

extension SocketLocation {
    /// The places tried after the state directory, and why each one passed over was.
    private struct Search {
        let fileName: String
        var ignored: [(path: String, reason: String)] = []

        /// A place found: the socket's path, and the directory made for this run if one was.
        struct Found {
            var path: String
            var runDirectory: String?
        }

        func fits(_ path: String) -> Bool { path.utf8.count <= SocketLocation.maximumLength }

        /// Whether `directory` may hold the socket; notes why not.
        mutating func accepts(_ directory: String, as role: String) -> Bool {
            do throws(SocketDirectory.Problem) {
                try SocketDirectory.verify(directory)
                return true
            } catch {
                ignored.append((directory, "\(role): \(error)"))
                return false
            }
        }

        /// `runtime` (`$XDG_RUNTIME_DIR`), else a private directory under `temporary` (`$TMPDIR`)
        /// or `/tmp`.
        mutating func elsewhere(runtime: String?, temporary: String?) -> Found? {
            if let runtime, !runtime.isEmpty {
                let path = runtime + "/" + fileName
                if !runtime.isAbsolutePath {
                    ignored.append((runtime, "XDG_RUNTIME_DIR: not an absolute path"))
                } else if !fits(path) {
                    ignored.append((runtime, "XDG_RUNTIME_DIR: \(path) is longer than the \(SocketLocation.maximumLength) bytes a socket path may have"))
                } else if accepts(runtime, as: "XDG_RUNTIME_DIR") {
                    return Found(path: path)
                }
            }
            var bases: [String] = []
            if let temporary, temporary.isAbsolutePath, !temporary.isSameName(as: "/tmp") {
                if let problem = SocketDirectory.problemAsParent(temporary) {
                    ignored.append((temporary, "TMPDIR: \(problem)"))
                } else {
                    bases.append(temporary)
                }
            }
            bases.append("/tmp")
            for base in bases {
                let trimmed = base.utf8.count > 1 && base.utf8.last == UInt8(ascii: "/") ? String(base.dropLast()) : base
                if let found = inPrivateDirectory(under: trimmed) { return found }
            }
            return nil
        }

        /// `<base>/autosave-<uid>/<name>`, else a directory of this run's own beside it.
        private mutating func inPrivateDirectory(under base: String) -> Found? {
            let shared = base + "/autosave-\(geteuid())"
            // Long enough for the run's own directory too: mkdtemp adds 7 bytes to the name.
            guard fits(shared + "-XXXXXX/" + fileName) else {
                ignored.append((base, "\(shared)/\(fileName) is longer than the \(SocketLocation.maximumLength) bytes a socket path may have"))
                return nil
            }
            if mkdir(shared, 0o700) != 0 && errno != EEXIST {
                ignored.append((shared, "it cannot be made: \(String(cString: strerror(errno)))"))
            } else if accepts(shared, as: "the user's socket directory") {
                return Found(path: shared + "/" + fileName)
            }
            var template = Array((shared + "-XXXXXX").utf8CString)
            guard let made = mkdtemp(&template) else {
                ignored.append((shared + "-XXXXXX", "it cannot be made: \(String(cString: strerror(errno)))"))
                return nil
            }
            let runDirectory = String(cString: made)
            guard accepts(runDirectory, as: "the run's own socket directory") else {
                rmdir(runDirectory)
                return nil
            }
            return Found(path: runDirectory + "/" + fileName, runDirectory: runDirectory)
        }
    }
}
