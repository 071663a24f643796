import ByteNames
import FoundationEssentials
import Glibc

extension SocketLocation {
    /// What a client found in a state directory.
    public enum Sighting: Sendable, Equatable {
        /// A socket to connect to, and the pointer file that named it (nil: `agent.sock` itself).
        /// Whoever listens there is still to be checked (`SO_PEERCRED`) before anything is sent:
        /// a pointer file can name any path, and a cloned repository can ship one.
        case socket(path: String, namedBy: String?)
        /// The state directory is another user's: their agent, or what is left of it.
        case anotherUser(OtherUsersAgent)
    }

    /// What clients find in `stateDirectory`, the state directory of the folder `root`: nil when
    /// it is missing or holds no socket (a client then looks further up).
    public static func find(stateDirectory: String, root: String) -> Sighting? {
        var status = stat()
        guard lstat(stateDirectory, &status) == 0, (status.st_mode & S_IFMT) == S_IFDIR else { return nil }
        if status.st_uid != geteuid() {
            return .anotherUser(OtherUsersAgent(stateDirectory: stateDirectory, root: root, owner: status.st_uid))
        }
        let pointer = stateDirectory + "/" + pointerName
        if let text = try? String(contentsOfFile: pointer, encoding: .utf8), !text.trimmingWhitespace().isEmpty {
            return .socket(path: text.trimmingWhitespace(), namedBy: pointer)
        }
        let socket = stateDirectory + "/" + socketName
        guard lstat(socket, &status) == 0, (status.st_mode & S_IFMT) == S_IFSOCK else { return nil }
        return .socket(path: socket, namedBy: nil)
    }
}

/// Another user's agent, or state directory, in the folder a command is about: what a client
/// can tell of it without being let in (its state directory is 0700).
///
/// Whether it runs is read from `/proc/net/unix`, which lists every bound socket's path to every
/// user: a listening socket at `<stateDir>/agent.sock`, or with the name the root's socket gets
/// elsewhere (`autosave-<hash of the root>.sock`), is taken as that agent listening.
public struct OtherUsersAgent: Sendable, Equatable, CustomStringConvertible {
    /// The folder the agent keeps.
    public let root: String
    /// Its state directory.
    public let stateDirectory: String
    /// The state directory's owner: the user the agent runs as.
    public let owner: uid_t
    /// The agent's pid, when its lock file could be read (by root) and it is listening.
    public let pid: Int?
    /// Whether a socket of that agent is listening.
    public let isListening: Bool

    /// Looks at the state directory `stateDirectory` of `root`, owned by `owner`.
    public init(stateDirectory: String, root: String, owner: uid_t) {
        self.root = root
        self.stateDirectory = stateDirectory
        self.owner = owner
        let listening = Self.isListening(stateDirectory: stateDirectory, root: root)
        isListening = listening
        let lock = try? String(contentsOfFile: stateDirectory + "/" + AgentLock.fileName, encoding: .utf8)
        pid = listening ? lock.flatMap { Int($0.trimmingWhitespace()) }.flatMap { kill(pid_t($0), 0) == 0 ? $0 : nil } : nil
    }

    /// Whose agent it is, whether it runs, and what the user can do instead.
    public var description: String {
        let user = UserNames.describe(owner)
        let name = UserNames.name(of: owner) ?? "#\(owner)"
        if isListening {
            return "an agent of \(user) is running for \(root)" + (pid.map { " (pid \($0))" } ?? "")
                + "; it serves only its own user, so nothing was sent to it. Run the command as that user "
                + "(`sudo -u \(name) autosave …`), or work in a folder of your own"
        }
        return "the folder \(root) is kept by an agent of \(user): its state directory \(stateDirectory) is theirs, "
            + "and no agent of theirs is listening now. You cannot run one here yourself: run it as that user, "
            + "or ask them to remove \(stateDirectory)"
    }

    /// Whether `/proc/net/unix` lists a listening socket at the root's socket path.
    ///
    /// The kernel makes that table a page at a time, and a socket made or closed meanwhile
    /// elsewhere on the machine can shift the rest so that a line is skipped: a table that lacks
    /// it is read again, three times in all.
    static func isListening(stateDirectory: String, root: String) -> Bool {
        let preferred = stateDirectory + "/" + SocketLocation.socketName
        let elsewhere = "/autosave-\(String(ContentDigest.of(Array(root.utf8)), radix: 16)).sock"
        for _ in 0..<3 {
            guard let table = try? FileContents.read("/proc/net/unix") else { return false }
            for line in table.split(separator: UInt8(ascii: "\n")).dropFirst() {
                // Num RefCount Protocol Flags Type St Inode Path: the path is the rest of the line.
                let fields = line.split(separator: UInt8(ascii: " "), maxSplits: 7, omittingEmptySubsequences: true)
                guard fields.count == 8, let flags = Int(String(decoding: fields[3], as: UTF8.self), radix: 16), flags & 0x10000 != 0
                else { continue }
                let path = fields[7]
                if path.elementsEqual(preferred.utf8) || path.reversed().starts(with: elsewhere.utf8.reversed()) { return true }
            }
        }
        return false
    }
}

/// Why an agent could not start in a folder whose state directory is another user's.
public enum OtherUsersStateDirectory: Error, Equatable, CustomStringConvertible {
    /// The lock could not be taken in `agent`'s state directory; `cause` is the lock's own reason.
    case cannotStart(OtherUsersAgent, cause: String)

    public var description: String {
        switch self {
        case .cannotStart(let agent, let cause):
            let user = UserNames.describe(agent.owner)
            let name = UserNames.name(of: agent.owner) ?? "#\(agent.owner)"
            return "cannot start an agent for \(agent.root): its state directory \(agent.stateDirectory) belongs to \(user) (\(cause)); "
                + (agent.isListening
                    ? "an agent of theirs is running for it" + (agent.pid.map { " (pid \($0))" } ?? "") + ". "
                    : "no agent of theirs is listening now. ")
                + "Run it as that user (`sudo -u \(name) autosave run`), or ask them to remove \(agent.stateDirectory)"
        }
    }

    /// The error to report when taking the lock of `stateDirectory` failed with `error`: this one
    /// when the state directory belongs to another user, else `error` unchanged.
    public static func explaining(_ error: any Error, stateDirectory: String, root: String) -> any Error {
        var status = stat()
        guard lstat(stateDirectory, &status) == 0, status.st_uid != geteuid() else { return error }
        return Self.cannotStart(OtherUsersAgent(stateDirectory: stateDirectory, root: root, owner: status.st_uid), cause: "\(error)")
    }
}
