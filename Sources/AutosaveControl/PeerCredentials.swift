import CAutosaveShims
import Glibc
import NIOCore

/// Reads who is at the other end of a Unix socket (`SO_PEERCRED`: pid, uid, gid) the moment the
/// connection is up, before a byte is read or written: a peer that closes at once (an agent that
/// refuses another user) is still known, and a client learns whom it is talking to before it says
/// anything.
final class PeerCredentialsHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer

    /// Why the credentials are not known: the connection ended, or never came up, first.
    struct Unavailable: Error, CustomStringConvertible {
        var description: String { "the connection ended before its peer could be asked who it is" }
    }

    private let promise: EventLoopPromise<CAutosaveShims_PeerCredentials>

    /// Completes `promise` with the peer's credentials once the channel is active, or fails it if
    /// the handler goes first.
    init(promise: EventLoopPromise<CAutosaveShims_PeerCredentials>) {
        self.promise = promise
    }

    func channelActive(context: ChannelHandlerContext) {
        // On the event loop, the option is read at once, while the descriptor is surely open.
        if let provider = context.channel as? any SocketOptionProvider {
            let credentials: EventLoopFuture<CAutosaveShims_PeerCredentials> = provider.unsafeGetSocketOption(
                level: SocketOptionLevel(SOL_SOCKET), name: SocketOptionName(SO_PEERCRED))
            credentials.cascade(to: promise)
        } else {
            promise.fail(Unavailable())
        }
        context.fireChannelActive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        promise.fail(Unavailable())
    }
}
