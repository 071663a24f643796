import Glibc

/// The check that a directory is fit to hold the control socket: one only its user can enter, as
/// tmux and ssh-agent require of theirs.
///
/// The check is made on a descriptor opened with `O_NOFOLLOW | O_DIRECTORY`, so what is checked is
/// the directory itself, never a symbolic link's target or a name looked up twice. The
/// socket is then bound by its path (sockets are bound by name; a socket bound through
/// `/proc/self/fd` would show that name to everyone and in `/proc/net/unix`), which leads to the
/// directory checked because no other user can rename an entry in its parent: `/tmp` (and
/// `$TMPDIR`, used only when it is sticky or closed to others) lets only an entry's owner rename
/// it, `$XDG_RUNTIME_DIR` lives in root's `/run/user`, and the state directory's parent is the
/// root, whose writers could replace every file the agent keeps anyway. The worst such a writer
/// can do is make clients miss the agent: clients check the uid of the process that listens
/// (`SO_PEERCRED`) before they send anything, whatever path led them there.
public enum SocketDirectory {
    /// Why a directory may not hold the control socket.
    public enum Problem: Error, Equatable, CustomStringConvertible {
        /// Nothing is at the path.
        case missing
        /// The path is a symbolic link (where it leads is not looked at).
        case symbolicLink
        /// The path is something other than a directory.
        case notADirectory
        /// The directory belongs to another user (who could put a socket of theirs in it).
        case ownedByAnotherUser(uid: uid_t)
        /// Group or others have some access to it (`mode` holds its permission bits).
        case openToOthers(mode: mode_t)
        /// It could not be opened or looked at: the system's reason.
        case unusable(String)

        public var description: String {
            switch self {
            case .missing: "it does not exist"
            case .symbolicLink: "it is a symbolic link"
            case .notADirectory: "it is not a directory"
            case .ownedByAnotherUser(let uid): "it belongs to \(UserNames.describe(uid)), not to \(UserNames.describe(geteuid()))"
            case .openToOthers(let mode):
                "its mode is 0\(String(mode & 0o7777, radix: 8)): group or others may enter it (it must be 0700)"
            case .unusable(let reason): "it cannot be looked at: \(reason)"
            }
        }
    }

    /// Checks that `path` is a directory, not a symbolic link, owned by this process's effective
    /// user, with no access for group or others.
    ///
    /// - Throws: the first `Problem` found.
    public static func verify(_ path: String) throws(Problem) {
        let fd = open(path, O_RDONLY | O_NOFOLLOW | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else {
            let code = errno
            var status = stat()
            switch code {
            case ENOENT: throw .missing
            case ELOOP: throw .symbolicLink
            case ENOTDIR where lstat(path, &status) == 0 && (status.st_mode & S_IFMT) == S_IFLNK: throw .symbolicLink
            case ENOTDIR: throw .notADirectory
            // Closed to us: whose it is is all there is to tell (and the reason it is refused).
            case EACCES where lstat(path, &status) == 0 && status.st_uid != geteuid(): throw .ownedByAnotherUser(uid: status.st_uid)
            default: throw .unusable(String(cString: strerror(code)))
            }
        }
        defer { close(fd) }
        var status = stat()
        guard fstat(fd, &status) == 0 else { throw .unusable(String(cString: strerror(errno))) }
        guard status.st_uid == geteuid() else { throw .ownedByAnotherUser(uid: status.st_uid) }
        guard status.st_mode & 0o077 == 0 else { throw .openToOthers(mode: status.st_mode) }
    }

    /// Checks that a directory to make private directories in (`/tmp`, `$TMPDIR`) lets no other
    /// user rename what is in it: it is sticky, or no one but its owner may write to it, and its
    /// owner is this user or root.
    ///
    /// - Returns: nil when it is fit, else why not, in words.
    static func problemAsParent(_ path: String) -> String? {
        var status = stat()
        guard stat(path, &status) == 0 else { return String(cString: strerror(errno)) }
        guard (status.st_mode & S_IFMT) == S_IFDIR else { return "it is not a directory" }
        guard status.st_uid == 0 || status.st_uid == geteuid() else { return "it belongs to \(UserNames.describe(status.st_uid))" }
        guard status.st_mode & 0o022 == 0 || status.st_mode & S_ISVTX != 0 else {
            return "others may write to it and it is not sticky (mode 0\(String(status.st_mode & 0o7777, radix: 8))), so they could rename what is in it"
        }
        return nil
    }
}
