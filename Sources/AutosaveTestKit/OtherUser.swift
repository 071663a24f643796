import Foundation
import Glibc

/// The other user the tests act as: `nobody`, group `nogroup`, reached with `setpriv`.
public enum OtherUser {
    /// `setpriv`'s arguments that make what follows run as the other user.
    public static let setpriv = ["--reuid=nobody", "--regid=nogroup", "--clear-groups"]

    /// Whether this machine lets the tests act as another user.
    public static var isAvailable: Bool {
        getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv") && getpwnam("nobody") != nil
            && getgrnam("nogroup") != nil
    }

    /// Makes `path` (mode 0755) and gives it to the other user.
    public static func directory(_ path: String) throws -> String {
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        chmod(path, 0o755)
        try runTool("/bin/chown", ["nobody:nogroup", path])
        return path
    }

    /// Runs a tool as the other user, expecting it to succeed.
    public static func run(_ command: [String]) throws {
        try runTool("/usr/bin/setpriv", setpriv + command)
    }

    /// Runs the binary under test as the other user.
    public static func runAutosave(_ arguments: [String], in directory: String) async throws -> (status: Int32, stdout: String, stderr: String) {
        try await AgentProcess.run(setpriv + [AgentProcess.binary] + arguments, executable: "/usr/bin/setpriv", in: directory)
    }
}

/// A socket server another user planted (`Tests/support/planted_server.py`, run as `nobody`): it
/// answers every connection at once with a fake successful answer (what would fool a client that
/// trusts it), and prints the bytes it receives as they come and each connection's total when it
/// ends, so a test can wait for those lines.
public final class PlantedServer: Sendable {
    /// The server's process (`setpriv` then `python3`), its printed lines recorded.
    public let process: AgentProcess

    /// The server's Python source, read here and handed over with `-c`: the other user need not
    /// be able to read the repository.
    static var script: String {
        get throws {
            let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                .deletingLastPathComponent()
            return try String(contentsOf: repository.appendingPathComponent("Tests/support/planted_server.py"), encoding: .utf8)
        }
    }

    /// Starts the server as the other user, listening at `socket`.
    public init(socket: String) async throws {
        process = try AgentProcess(OtherUser.setpriv + ["/usr/bin/python3", "-c", try Self.script, socket], executable: "/usr/bin/setpriv")
        _ = try await process.stdoutLines.first(timeout: .seconds(30), "the planted server listening") { $0 == "listening" }
    }

    /// The byte counts of the connections that have ended so far.
    public var connections: [Int] {
        process.stdoutLines.elements.compactMap { line in
            line.utf8.starts(with: "closed ".utf8) ? Int(line.split(separator: " ")[1]) : nil
        }
    }

    /// Waits for the first connection to end and returns how many bytes it sent.
    public func firstConnection() async throws -> Int {
        let line = try await process.stdoutLines.first(timeout: .seconds(30), "a connection to the planted server to end") {
            $0.utf8.starts(with: "closed ".utf8)
        }
        return Int(line.split(separator: " ")[1]) ?? -1
    }

    deinit { process.signal(SIGKILL) }
}
