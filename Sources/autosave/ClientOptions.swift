import ArgumentParser
import AutosaveControl
import AutosaveKit
import ByteNames
import FoundationEssentials
import Glibc

/// How a client command finds its agent: `--socket`, `AUTOSAVE_SOCKET`, or like git finds
/// `.git`, walking up from the current directory to a state dir with a socket.
struct ClientOptions: ParsableArguments {
    @Option(name: .long, help: "The agent's control socket (default: $AUTOSAVE_SOCKET, else found by walking up from here).")
    var socket: String?

    /// Exit code 3: nothing to talk to.
    static let noAgent = ExitCode(3)

    func connect() async throws -> ControlClient {
        let here = FileManager.default.currentDirectoryPath
        guard let path = socket ?? ProcessInfo.processInfo.environment["AUTOSAVE_SOCKET"] ?? Self.discover(from: here) else {
            printError("no agent is running for \(here); start one with `autosave run`")
            throw Self.noAgent
        }
        do {
            return try await ControlClient(socketPath: path)
        } catch {
            printError("no agent is running for \(here) (nothing listens on \(path)); start one with `autosave run`")
            throw Self.noAgent
        }
    }

    /// Sends one request; prints the agent's refusal and exits 1 on failure.
    func call(_ method: RPCMethod, _ params: [JSONMember] = []) async throws -> JSONValue {
        let client = try await connect()
        do {
            return try await client.call(method, params)
        } catch {
            printError("\(error)")
            throw ExitStatus.failure
        }
    }

    /// Sends one request with raw bytes after it; returns the answer and the raw bytes after
    /// it. Prints the agent's refusal and exits 1 on failure.
    func call(_ method: RPCMethod, _ params: [JSONMember] = [], content: RequestContent?) async throws -> ControlAnswer {
        let client = try await connect()
        do {
            return try await client.call(method, params, content: content)
        } catch {
            printError("\(error)")
            throw ExitStatus.failure
        }
    }

    static func discover(from start: String) -> String? {
        var directory = PathText.normalized(start)
        while true {
            if let socket = SocketLocation.find(stateDirectory: directory + "/.autosave") { return socket }
            if directory == "/" || directory.isEmpty { return nil }
            directory = PathText.parent(of: directory)
        }
    }

    /// A path as the user typed it, made absolute against the current directory and nothing more:
    /// the agent resolves symbolic links and `..` as the kernel does (a relative link against its
    /// own folder). Foundation's `standardizingPath` resolved a relative link against the current
    /// directory instead, and sent writes to the wrong file.
    static func absolute(_ path: String) -> String {
        path.isAbsolutePath ? path : FileManager.default.currentDirectoryPath + "/" + path
    }
}

func field(_ key: String, _ value: JSONValue) -> JSONMember {
    JSONMember(key: key, value: value, position: SourcePosition(line: 0, column: 0))
}
