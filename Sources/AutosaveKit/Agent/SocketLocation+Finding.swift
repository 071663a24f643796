import FoundationEssentials
import Glibc

extension SocketLocation {
    /// What a client found in a state directory.
    public enum Sighting: Sendable, Equatable {
        /// A socket to connect to, and the pointer file that named it (nil: `agent.sock` itself).
        /// Whoever listens there is still to be checked (`SO_PEERCRED`) before anything is sent:
        /// a pointer file can name any path, and a cloned repository can ship one.
        case socket(path: String, namedBy: String?)
    }

    /// What clients find in `stateDirectory`, the state directory of the folder `root`: nil when
    /// it is missing or holds no socket (a client then looks further up).
    public static func find(stateDirectory: String, root: String) -> Sighting? {
        var status = stat()
        guard lstat(stateDirectory, &status) == 0, (status.st_mode & S_IFMT) == S_IFDIR else { return nil }
        let pointer = stateDirectory + "/" + pointerName
        if let text = try? String(contentsOfFile: pointer, encoding: .utf8), !text.trimmingWhitespace().isEmpty {
            return .socket(path: text.trimmingWhitespace(), namedBy: pointer)
        }
        let socket = stateDirectory + "/" + socketName
        guard lstat(socket, &status) == 0, (status.st_mode & S_IFMT) == S_IFSOCK else { return nil }
        return .socket(path: socket, namedBy: nil)
    }
}
