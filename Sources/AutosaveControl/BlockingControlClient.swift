import AutosaveKit
import CAutosaveShims
import Glibc
import NIOCore

/// One request to the agent over its control socket with plain blocking calls: no event loop, no
/// thread, and the raw bytes after the answer handed on as they arrive, never gathered whole.
///
/// For a command that prints one large answer (`show`): starting NIO's event loops, growing a
/// buffer to 1 MB and copying it out were most of what `autosave show` cost in the client. The
/// same checks as `ControlClient`: the process listening at the socket must be the user's own
/// (or root's) before anything is sent.
public enum BlockingControlClient {
    /// What one read from the socket takes at most.
    static let readBytes = 1 << 20

    /// Sends `request` to the agent at `socketPath` and returns its result; the raw bytes the
    /// result announces (`contentBytes`) go to `sink` in order, as they arrive, before it returns.
    ///
    /// - Returns: the result, and how many raw bytes went to `sink` (nil: the result announced none).
    /// - Throws: `ControlClientError` as `ControlClient.init` and `call` do (`.unreachable`,
    ///   `.anotherUsersSocket` and `.peerUnknown` with nothing sent, `.refused`,
    ///   `.unreadableAnswer`, `.disconnected`, and `.truncated` when the connection ends inside the
    ///   raw bytes: those that came have gone to `sink`); `FramingError` for an answer that cannot
    ///   be framed.
    public static func call<Method: ControlMethod>(
        _ request: Method, socketPath: String, sink: (UnsafeRawBufferPointer) -> Void
    ) throws -> (result: Method.Result, contentBytes: Int?) {
        let socket = try connect(socketPath)
        defer { close(socket) }
        try ControlClient.admit(try peer(of: socket, socketPath: socketPath), socketPath: socketPath)
        try send(ControlClient.requestLine(Method.method, request.params), to: socket)
        var reader = FrameReader(limit: 1 << 34, announcer: .result)
        var buffer = ByteBuffer()
        while true {
            guard let (line, announcement) = try reader.nextLine(from: &buffer) else {
                guard try receive(from: socket, into: &buffer) > 0 else { throw ControlClientError.disconnected }
                continue
            }
            let answer = try ControlClient.parse(line)
            let value: JSONValue?
            if case .object(let members) = answer {
                if let refusal = ControlClient.refusal(in: members) { throw refusal }
                value = members.first { $0.key == "result" }?.value
            } else {
                value = nil
            }
            guard let value else {
                // Only the answer's raw bytes go to `sink`; a line before it (none is sent today) is passed over.
                try pass(announcement, from: socket, buffered: &buffer) { _ in }
                continue
            }
            try pass(announcement, from: socket, buffered: &buffer, to: sink)
            return (try ControlClient.read(Method.self, value), announcement?.count)
        }
    }

    // MARK: - Helpers

    /// A connected socket to `path`.
    private static func connect(_ path: String) throws(ControlClientError) -> Int32 {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let name = Array(path.utf8)
        // The name and its terminating NUL must fit, as the kernel reads it.
        guard name.count < MemoryLayout.size(ofValue: address.sun_path) else {
            throw .unreachable(socketPath: path, errno: ENAMETOOLONG)
        }
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: name) }
        let socket = Glibc.socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard socket >= 0 else { throw .unreachable(socketPath: path, errno: errno) }
        let connected = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(socket, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard connected == 0 else {
            let code = errno
            close(socket)
            throw .unreachable(socketPath: path, errno: code)
        }
        return socket
    }

    /// Who listens at the other end (`SO_PEERCRED`), read before a byte is sent.
    private static func peer(of socket: Int32, socketPath: String) throws(ControlClientError) -> CAutosaveShims_PeerCredentials {
        var credentials = CAutosaveShims_PeerCredentials()
        var length = socklen_t(MemoryLayout<CAutosaveShims_PeerCredentials>.size)
        guard getsockopt(socket, SOL_SOCKET, SO_PEERCRED, &credentials, &length) == 0 else {
            throw .peerUnknown(socketPath: socketPath, reason: String(cString: strerror(errno)))
        }
        return credentials
    }

    private static func send(_ line: String, to socket: Int32) throws(ControlClientError) {
        var bytes = Array(line.utf8)[...]
        while !bytes.isEmpty {
            // MSG_NOSIGNAL: an agent gone away is an error here, not a SIGPIPE that ends the client.
            let sent = bytes.withUnsafeBytes { Glibc.send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if sent < 0, errno == EINTR { continue }
            guard sent > 0 else { throw .disconnected }
            bytes = bytes.dropFirst(sent)
        }
    }

    /// Reads what the socket has (up to `readBytes`) onto the end of `buffer`; 0 at its end.
    private static func receive(from socket: Int32, into buffer: inout ByteBuffer) throws(ControlClientError) -> Int {
        while true {
            let read = buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: 64 << 10) { target in
                Glibc.read(socket, target.baseAddress, min(target.count, readBytes))
            }
            if read < 0, errno == EINTR { continue }
            guard read >= 0 else { throw .disconnected }
            return read
        }
    }

    /// Hands the `announcement.count` raw bytes after a line to `sink`: those `buffered` already,
    /// then the rest as it is read.
    private static func pass(
        _ announcement: (count: Int, id: JSONValue?)?, from socket: Int32, buffered: inout ByteBuffer,
        to sink: (UnsafeRawBufferPointer) -> Void
    ) throws {
        guard let announcement else { return }
        var received = min(buffered.readableBytes, announcement.count)
        buffered.readWithUnsafeReadableBytes { bytes in
            sink(UnsafeRawBufferPointer(rebasing: bytes.prefix(received)))
            return received
        }
        guard received < announcement.count else { return }
        // The rest straight from the socket into one buffer, reused for each read.
        let chunk = UnsafeMutableRawBufferPointer.allocate(byteCount: min(readBytes, announcement.count - received), alignment: 16)
        defer { chunk.deallocate() }
        while received < announcement.count {
            let read = Glibc.read(socket, chunk.baseAddress, min(chunk.count, announcement.count - received))
            if read < 0, errno == EINTR { continue }
            guard read > 0 else {
                throw ControlClientError.truncated(received: received, announced: announcement.count)
            }
            sink(UnsafeRawBufferPointer(rebasing: chunk[..<read]))
            received += read
        }
    }
}
