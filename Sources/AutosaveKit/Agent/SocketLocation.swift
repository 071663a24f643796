import FoundationEssentials
import Glibc

/// Where the control socket lives: `<stateDir>/agent.sock`, or a shorter path under
/// `$XDG_RUNTIME_DIR` (else /tmp) when that would exceed the 107-byte limit of `sun_path`,
/// recorded in `<stateDir>/agent.sock.path` for clients.
public enum SocketLocation {
    public static let maximumLength = 107

    /// The socket path for a state directory, writing the pointer file when it is elsewhere.
    public static func make(stateDirectory: String, root: String) -> String {
        let preferred = stateDirectory + "/agent.sock"
        let pointer = stateDirectory + "/agent.sock.path"
        guard preferred.utf8.count > maximumLength else {
            unlink(pointer)
            return preferred
        }
        let base = ProcessInfo.processInfo.environment["XDG_RUNTIME_DIR"] ?? "/tmp"
        let path = base + "/autosave-\(String(ContentDigest.of(Array(root.utf8)), radix: 16)).sock"
        try? FileManager.default.createDirectory(
            atPath: stateDirectory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        try? Data((path + "\n").utf8).write(to: URL(fileURLWithPath: pointer))
        return path
    }

    /// The socket of the agent whose state directory is `stateDirectory`, if one was set up there.
    public static func find(stateDirectory: String) -> String? {
        let pointer = stateDirectory + "/agent.sock.path"
        if let text = try? String(contentsOfFile: pointer, encoding: .utf8) {
            return text.trimmingWhitespace()
        }
        let socket = stateDirectory + "/agent.sock"
        return FileManager.default.fileExists(atPath: socket) ? socket : nil
    }
}
