import ArgumentParser
import AutosaveControl
import AutosaveKit
import ByteNames
import FoundationEssentials
import Glibc

/// How a client command finds its agent: `--socket`, `AUTOSAVE_SOCKET`, or like git finds
/// `.git`, walking up from the current directory to a state dir with a socket. Whatever named the
/// socket, the process listening there must be the user's own (or root's) before anything is sent.
struct ClientOptions: ParsableArguments {
    @Option(name: .long, help: "The agent's control socket (default: $AUTOSAVE_SOCKET, else found by walking up from here).")
    var socket: String?

    /// Exit code 3: nothing to talk to.
    static let noAgent = ExitCode(3)
    /// Exit code 4: the agent (or the socket) found is another user's; nothing was sent to it.
    static let anotherUsersAgent = ExitCode(4)

    /// Connects to the agent, or prints why not and exits: 3 when none is running, 4 when the
    /// folder's agent, or the socket named, is another user's.
    func connect() async throws -> ControlClient {
        let (path, route) = try socketPath()
        do {
            return try await ControlClient(socketPath: path)
        } catch {
            throw Self.failure(error, path: path, route: route)
        }
    }

    /// Sends one request over a blocking connection (no event loop, no thread) and hands the raw
    /// bytes after its answer to `sink` as they arrive: for a command that prints a large answer.
    /// Prints why it failed and exits as `connect()` and `call` do.
    ///
    /// - Returns: the result, and how many raw bytes went to `sink` (nil: none were announced).
    func call<Method: ControlMethod>(
        _ request: Method, streamingContentTo sink: (UnsafeRawBufferPointer) -> Void
    ) throws -> (result: Method.Result, contentBytes: Int?) {
        let (path, route) = try socketPath()
        do {
            return try BlockingControlClient.call(request, socketPath: path, sink: sink)
        } catch let error as ControlClientError where error.isConnecting {
            throw Self.failure(error, path: path, route: route)
        } catch {
            printError("\(error)")
            throw ExitStatus.failure
        }
    }

    /// The agent's socket and what named it (`--socket`, `AUTOSAVE_SOCKET`, a pointer file, or
    /// the state directory found walking up), or prints why there is none and exits: 3 when no
    /// agent runs for this folder, 4 when its agent is another user's.
    private func socketPath() throws -> (path: String, route: String) {
        if let socket { return (socket, "named by --socket") }
        if let variable = ProcessInfo.processInfo.environment["AUTOSAVE_SOCKET"] { return (variable, "named by AUTOSAVE_SOCKET") }
        let here = FileManager.default.currentDirectoryPath
        switch Self.discover(from: here) {
        case nil:
            printError("no agent is running for \(here); start one with `autosave run`")
            throw Self.noAgent
        case .anotherUser(let agent):
            printError(agent.description)
            throw Self.anotherUsersAgent
        case .socket(let found, let pointer):
            return (found, pointer.map { "named by \($0)" } ?? "found in \(PathText.parent(of: found))")
        }
    }

    /// Prints why connecting to `path` failed; the exit status to throw: 4 for another user's
    /// socket, 3 when nothing (of this user's) listens there, 1 otherwise.
    private static func failure(_ error: any Error, path: String, route: String) -> any Error {
        let here = FileManager.default.currentDirectoryPath
        guard let error = error as? ControlClientError else {
            printError("no agent is running for \(here) (nothing listens on \(path): \(error)); start one with `autosave run`")
            return noAgent
        }
        switch error {
        case .anotherUsersSocket:
            printError(error.description(route: route) + ". " + ControlClientError.anotherUsersSocketAdvice)
            return anotherUsersAgent
        case .unreachable(_, EACCES):
            printError(
                "cannot reach the socket \(path) (\(route)): permission denied, so a directory on the way is closed to you "
                    + "(\(UserNames.describe(geteuid()))); if an agent listens there it is another user's")
            return noAgent
        case .unreachable:
            printError("no agent is running for \(here) (nothing listens on \(path)); start one with `autosave run`")
            return noAgent
        default:
            printError(error.description(route: route))
            return ExitStatus.failure
        }
    }

    /// Sends one request; prints the agent's refusal and exits 1 on failure.
    func call<Method: ControlMethod>(_ request: Method) async throws -> Method.Result {
        try await call(request, content: nil).result
    }

    /// Sends one request with raw bytes after it; returns the answer and the raw bytes after
    /// it. Prints the agent's refusal and exits 1 on failure.
    func call<Method: ControlMethod>(_ request: Method, content: RequestContent?) async throws -> ControlAnswer<Method.Result> {
        let client = try await connect()
        do {
            return try await client.call(request, content: content)
        } catch {
            printError("\(error)")
            throw ExitStatus.failure
        }
    }

    /// What the nearest state directory `.autosave` at or above `start` holds: a socket, or
    /// another user's agent (then the search stops: that agent is the folder's).
    static func discover(from start: String) -> SocketLocation.Sighting? {
        var directory = PathText.normalized(start)
        while true {
            let root = directory.isSameName(as: "/") ? "" : directory
            if let sighting = SocketLocation.find(stateDirectory: root + "/.autosave", root: directory) { return sighting }
            if directory == "/" || directory.isEmpty { return nil }
            directory = PathText.parent(of: directory)
        }
    }

    /// A path as the user typed it, made absolute against the current directory and nothing more:
    /// the agent resolves symbolic links and `..` as the kernel does (a relative link against its
    /// own folder). Foundation's `standardizingPath` resolved a relative link against the current
    /// directory instead, and sent writes to the wrong file.
    ///
    /// Only `.` components and repeated or trailing slashes are dropped, which mean nothing on any
    /// file system: `autosave history .` in a folder names that folder (`..` is left to the agent).
    static func absolute(_ path: String) -> String {
        let absolute = path.isAbsolutePath ? path : FileManager.default.currentDirectoryPath + "/" + path
        return "/" + absolute.pathComponents.filter { !$0.utf8.elementsEqual(".".utf8) }.joined(separator: "/")
    }
}

func field(_ key: String, _ value: JSONValue) -> JSONMember {
    JSONMember(key: key, value: value, position: SourcePosition(line: 0, column: 0))
}
