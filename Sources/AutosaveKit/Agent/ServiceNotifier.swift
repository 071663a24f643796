import Glibc
import Logging

/// Tells a service manager (systemd, through `$NOTIFY_SOCKET`) how the agent is doing:
/// `READY=1` once clients can reach it, `STOPPING=1` when graceful shutdown begins.
///
/// Same protocol as `sd_notify(3)`: one datagram per message to a Unix socket, a leading `@`
/// meaning the abstract namespace. A failed send is logged once (`notify-failed`) and never stops
/// the agent; a unit of `Type=notify` then times out, which tells the operator where to look.
public struct ServiceNotifier: Sendable {
    /// The socket the messages go to, as `$NOTIFY_SOCKET` names it.
    public let socketPath: String

    public init(socketPath: String) { self.socketPath = socketPath }

    /// The notifier `$NOTIFY_SOCKET` asks for, or nil when the agent was not started by a
    /// service manager that listens.
    public static func fromEnvironment() -> ServiceNotifier? {
        guard let path = getenv("NOTIFY_SOCKET").map({ String(cString: $0) }), !path.isEmpty else { return nil }
        return ServiceNotifier(socketPath: path)
    }

    /// Sends one message (`READY=1`, `STOPPING=1`, `STATUS=…`).
    ///
    /// - Throws: `Failure` naming the socket and the errno's text.
    public func send(_ message: String) throws(Failure) {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        var path = Array(socketPath.utf8)
        if path.first == UInt8(ascii: "@") { path[0] = 0 }
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard path.count < capacity, path.first == 0 || path.first == UInt8(ascii: "/") else {
            throw Failure(socketPath: socketPath, reason: "not an absolute path or an abstract (@) name that fits a socket address")
        }
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: path) }
        let length = socklen_t(MemoryLayout<sockaddr_un>.offset(of: \.sun_path)! + path.count)
        let descriptor = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw Failure(socketPath: socketPath, reason: String(cString: strerror(errno))) }
        defer { close(descriptor) }
        let sent = Array(message.utf8).withUnsafeBytes { bytes in
            withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    sendto(descriptor, bytes.baseAddress, bytes.count, Int32(MSG_NOSIGNAL), $0, length)
                }
            }
        }
        guard sent >= 0 else { throw Failure(socketPath: socketPath, reason: String(cString: strerror(errno))) }
    }

    /// A message that could not reach the service manager.
    public struct Failure: Error, CustomStringConvertible {
        public let socketPath: String
        public let reason: String
        public var description: String { "cannot notify the service manager at \(socketPath): \(reason)" }
    }
}

extension ServiceNotifier {
    /// Sends `message`; a failure is a warning in the log, nothing more.
    func send(_ message: String, logger: Logger) {
        do { try send(message) } catch {
            logger.warning("notify-failed", metadata: ["message": "\(message)", "error": "\(error)", "next": "running on; the service manager was not told"])
        }
    }
}
