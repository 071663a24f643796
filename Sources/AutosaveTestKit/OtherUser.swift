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

/// A socket server another user planted: it answers every connection at once with a fake
/// successful answer (what would fool a client that trusts it), and prints how many bytes each
/// connection sent it before closing, so a test can wait for that line.
public final class PlantedServer: Sendable {
    /// The server's process (`setpriv` then `python3`), its printed lines recorded.
    public let process: AgentProcess

    /// The server, in Python: it only needs the standard library.
    static let script = """
        import socket, sys
        server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        server.bind(sys.argv[1])
        server.listen(16)
        print("listening", flush=True)
        while True:
            connection, _ = server.accept()
            received = b""
            try:
                connection.sendall(b'{"jsonrpc":"2.0","id":1,"result":{"path":"notes.txt","revision":1}}\\n')
                connection.settimeout(20)
                while True:
                    chunk = connection.recv(65536)
                    if not chunk:
                        break
                    received += chunk
            except OSError:
                pass
            connection.close()
            print("received", len(received), received.hex(), flush=True)
        """

    /// Starts the server as the other user, listening at `socket`.
    public init(socket: String) async throws {
        process = try AgentProcess(OtherUser.setpriv + ["/usr/bin/python3", "-c", Self.script, socket], executable: "/usr/bin/setpriv")
        _ = try await process.stdoutLines.first(timeout: .seconds(30), "the planted server listening") { $0 == "listening" }
    }

    /// The byte counts of the connections it has closed so far.
    public var connections: [Int] {
        process.stdoutLines.elements.compactMap { line in
            line.utf8.starts(with: "received ".utf8) ? Int(line.split(separator: " ")[1]) : nil
        }
    }

    /// Waits for the next connection to end and returns how many bytes it sent.
    public func nextConnection() async throws -> Int {
        let line = try await process.stdoutLines.first(timeout: .seconds(30), "a connection to the planted server") {
            $0.utf8.starts(with: "received ".utf8)
        }
        return Int(line.split(separator: " ")[1]) ?? -1
    }

    deinit { process.signal(SIGKILL) }
}
