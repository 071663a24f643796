import Glibc

/// The control socket's listening descriptor, bound by the agent itself and handed to SwiftNIO.
///
/// The agent keeps its number: when descriptors run out, accept fails and SwiftNIO would wake
/// for the same waiting client again and again (100 % CPU); `SpareDescriptor` accepts those
/// clients on this descriptor to tell them why and close them.
struct ListeningSocket {
    /// The bound (not yet listening) socket; SwiftNIO owns it once it is handed over.
    let descriptor: CInt

    /// Why the socket could not be bound, in words (`ControlServer` adds the path).
    enum BindError: Error, CustomStringConvertible {
        case notASocket
        case pathTooLong
        case system(CInt)

        var description: String {
            switch self {
            case .notASocket: "something other than a socket is there; remove it"
            case .pathTooLong: "the path is longer than a socket address holds (107 bytes)"
            case .system(let code): String(cString: strerror(code))
            }
        }
    }

    /// Binds a Unix stream socket at `path`, replacing a socket file left there by an agent that
    /// is gone.
    ///
    /// - Throws: `BindError`: something other than a socket is there, the path does not fit a
    ///   socket address, or the kernel's reason (`EACCES`, …).
    static func bind(at path: String) throws(BindError) -> ListeningSocket {
        var status = stat()
        if lstat(path, &status) == 0 {
            guard status.st_mode & S_IFMT == S_IFSOCK else { throw .notASocket }
            unlink(path)
        }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { throw .pathTooLong }
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
        let length = socklen_t(MemoryLayout<sockaddr_un>.offset(of: \.sun_path)! + bytes.count + 1)
        let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw .system(errno) }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.bind(descriptor, $0, length) }
        }
        guard bound == 0 else {
            let code = errno
            close(descriptor)
            throw .system(code)
        }
        return ListeningSocket(descriptor: descriptor)
    }
}
