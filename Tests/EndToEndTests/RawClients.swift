import AutosaveTestKit
import Foundation
import Synchronization

/// Clients of the control socket on plain sockets: many at once, each idle until told to speak,
/// as the descriptor tests need (the CLI is a process per client, too heavy for 120 of them).
final class RawClients: Sendable {
    /// A connect that failed, with the errno's text.
    struct ConnectFailed: Error, CustomStringConvertible {
        let description: String
    }

    private let descriptors: [Int32]
    private let isClosed = Mutex(false)

    /// Connects `count` clients to the Unix socket at `path`; each is queued by the kernel even
    /// when the agent does not accept it.
    init(socket path: String, count: Int) throws {
        var made: [Int32] = []
        for _ in 0..<count {
            let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            var address = sockaddr_un()
            address.sun_family = sa_family_t(AF_UNIX)
            withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array(path.utf8)) }
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
            }
            guard fd >= 0, connected == 0 else {
                let reason = String(cString: strerror(errno))
                made.forEach { Glibc.close($0) }
                throw ConnectFailed(description: "connect to \(path): \(reason)")
            }
            made.append(fd)
        }
        descriptors = made
    }

    /// Sends `lines` (each followed by a newline) on client `index`, or on every client.
    func send(_ lines: [String], on index: Int? = nil) {
        let bytes = Array(lines.map { $0 + "\n" }.joined().utf8)
        for fd in index.map({ [descriptors[$0]] }) ?? descriptors {
            var offset = 0
            while offset < bytes.count {
                let written = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress! + offset, bytes.count - offset, Int32(MSG_NOSIGNAL)) }
                guard written > 0 else { break }
                offset += written
            }
        }
    }

    /// Reads lines until client `index` has sent `count` of them (or every client one, when
    /// `index` is nil), a client's end, or `timeout`. Returns each client's lines.
    func lines(count: Int = 1, on index: Int? = nil, timeout: Duration = .seconds(30)) async -> [[String]] {
        let watched = index.map { [descriptors[$0]] } ?? descriptors
        return await withCheckedContinuation { continuation in
            // poll() blocks: it runs on a thread of its own, never on the tests' task threads.
            Thread.detachNewThread {
                continuation.resume(returning: Self.read(watched, count: count, until: .now + timeout))
            }
        }
    }

    /// Closes every client.
    func close() {
        let wasClosed = isClosed.withLock { closed in
            defer { closed = true }
            return closed
        }
        if !wasClosed { descriptors.forEach { Glibc.close($0) } }
    }

    deinit { close() }

    private static func read(_ descriptors: [Int32], count: Int, until deadline: ContinuousClock.Instant) -> [[String]] {
        var pending = [[UInt8]](repeating: [], count: descriptors.count)
        var lines = [[String]](repeating: [], count: descriptors.count)
        var open = Set(descriptors.indices)
        while !open.isEmpty, ContinuousClock.now < deadline {
            var polls = open.map { pollfd(fd: descriptors[$0], events: Int16(POLLIN), revents: 0) }
            let left = Int32(max(1, (deadline - .now) / .milliseconds(1)))
            guard poll(&polls, nfds_t(polls.count), left) > 0 else { continue }
            for (slot, index) in open.enumerated() where polls[slot].revents != 0 {
                var chunk = [UInt8](repeating: 0, count: 65536)
                let got = chunk.withUnsafeMutableBytes { recv(descriptors[index], $0.baseAddress, $0.count, 0) }
                guard got > 0 else {
                    open.remove(index)
                    continue
                }
                pending[index] += chunk[..<got]
                while let newline = pending[index].firstIndex(of: 0x0A) {
                    lines[index].append(String(decoding: pending[index][..<newline], as: UTF8.self))
                    pending[index].removeSubrange(...newline)
                }
                if lines[index].count >= count { open.remove(index) }
            }
        }
        return lines
    }
}
