import FoundationEssentials
import Glibc
import SystemPackage

/// One agent per root: an exclusive `flock` on `<stateDir>/agent.lock`, holding the agent's pid.
///
/// The kernel drops the lock when the process dies, so a crashed agent never blocks the next one.
public final class AgentLock: Sendable {
    private let descriptor: CInt

    /// The lock's name inside a state directory; a directory holding it is an agent's state
    /// directory, which other agents (of an enclosing project) neither watch nor report.
    public static let fileName = "agent.lock"

    /// Why the lock could not be taken.
    public enum LockError: Error, Equatable, CustomStringConvertible {
        case alreadyRunning(root: String, pid: Int?)
        case unavailable(path: String, String)

        public var description: String {
            switch self {
            case .alreadyRunning(let root, let pid):
                "an agent is already running for \(root)" + (pid.map { " (pid \($0))" } ?? "")
            case .unavailable(let path, let reason): "cannot lock \(path): \(reason)"
            }
        }
    }

    /// Takes the lock of the state directory (created, mode 0700).
    ///
    /// - Throws: `LockError.alreadyRunning` naming the other agent's pid.
    public init(stateDirectory: String, root: String) throws(LockError) {
        do throws(Errno) { try Folders.make(stateDirectory) } catch {
            throw .unavailable(path: stateDirectory, "\(error.description); the state directory could not be made")
        }
        chmod(stateDirectory, 0o700)
        let path = stateDirectory + "/" + Self.fileName
        let fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw .unavailable(path: path, String(cString: strerror(errno))) }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            let text = (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
            close(fd)
            throw .alreadyRunning(root: root, pid: Int(text.trimmingWhitespace()))
        }
        ftruncate(fd, 0)
        let pid = Array("\(getpid())\n".utf8)
        _ = pid.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) }
        descriptor = fd
    }

    deinit { close(descriptor) }
}

extension String {
    /// The text without the spaces, tabs and line breaks at either end (a pid or a path read
    /// from a file a shell may have written).
    func trimmingWhitespace() -> String {
        guard let first = firstIndex(where: { !$0.isWhitespace }), let last = lastIndex(where: { !$0.isWhitespace }) else {
            return ""
        }
        return String(self[first...last])
    }
}
