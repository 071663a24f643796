import Glibc
import NIOCore

/// Keeps one descriptor in reserve on the listening channel, to answer and close the clients
/// waiting to be accepted when the process has no descriptor left (libuv's and nginx's answer).
///
/// When `accept` fails with `EMFILE` or `ENFILE`, SwiftNIO keeps the listening socket in its
/// epoll set while clients wait in the backlog, and the event loop woke for them without end
/// (100 % CPU under `ulimit -n 64` and 120 idle clients). Here the reserve is closed, each waiting
/// client is accepted on the freed slot, told why (`outOfDescriptors`) and closed, and the reserve
/// is taken back: the backlog is empty, so nothing wakes the loop until the next client comes.
/// The error then goes on to SwiftNIO's `AcceptBackoffHandler`, which waits a second before
/// accepting again.
final class SpareDescriptor: ChannelInboundHandler {
    typealias InboundIn = any Channel

    private let listening: CInt
    private let admission: ClientAdmission
    private var spare: CInt

    /// Most clients refused in one go: the loop must go back to its other channels.
    private static let refusalsAtOnce = 1024

    init(listening: CInt, admission: ClientAdmission) {
        self.listening = listening
        self.admission = admission
        spare = Self.reserve()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if let failure = error as? IOError, failure.errnoCode == EMFILE || failure.errnoCode == ENFILE {
            let answer = Array((admission.refusal(failure.errnoCode == ENFILE ? .system : .process) + "\n").utf8)
            admission.acceptFailed(failure.errnoCode, refused: refuseWaitingClients(answer))
        }
        context.fireErrorCaught(error)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        if spare >= 0 { close(spare) }
        spare = -1
    }

    /// Accepts, answers and closes every client waiting, on the slot the reserve frees; returns
    /// how many. None when the reserve is gone (another thread took its slot last time) and
    /// cannot be taken back yet.
    private func refuseWaitingClients(_ answer: [UInt8]) -> Int {
        if spare < 0 { spare = Self.reserve() }
        guard spare >= 0 else { return 0 }
        close(spare)
        var refused = 0
        while refused < Self.refusalsAtOnce {
            // The socket is non-blocking (SwiftNIO's): EAGAIN says none waits any more; EMFILE, that
            // another thread took the freed slot first. The client is closed at once (no CLOEXEC needed).
            let client = accept(listening, nil, nil)
            guard client >= 0 else { break }
            // One short line fits an empty socket buffer; a client that cannot take it misses only the reason.
            _ = answer.withUnsafeBytes { send(client, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) }
            close(client)
            refused += 1
        }
        spare = Self.reserve()
        return refused
    }

    private static func reserve() -> CInt {
        open("/dev/null", O_RDONLY | O_CLOEXEC)
    }
}
