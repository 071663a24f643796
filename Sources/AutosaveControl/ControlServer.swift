import AutosaveKit
import CAutosaveShims
import Glibc
import Logging
import NIOCore
import NIOPosix

/// The agent's control socket: JSON-RPC 2.0, one message per line, on a Unix domain socket.
///
/// Only the agent's own user may connect (checked with `SO_PEERCRED`). Bad input never crashes
/// the agent and never touches a file: it gets an error response and the connection stays usable,
/// except for a request over `limits.maxRequestBytes`, after which the connection closes.
public struct ControlServer<C: Clock>: Sendable where C.Duration == Duration {
    public let socketPath: String
    let methods: ControlMethods<C>
    let maxRequestBytes: Int
    let logger: Logger

    public init(
        socketPath: String, workspace: Workspace<C>, maxRequestBytes: Int, logger: Logger,
        requestShutdown: @escaping @Sendable () -> Void
    ) {
        self.socketPath = socketPath
        self.methods = ControlMethods(workspace: workspace, requestShutdown: requestShutdown)
        self.maxRequestBytes = maxRequestBytes
        self.logger = logger
    }

    /// Serves until the task is cancelled; the socket file is removed on the way out.
    ///
    /// - Throws: when the socket cannot be bound.
    public func run() async throws {
        let limit = maxRequestBytes
        let server = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            // A client that sends its requests and then shuts down its side still gets every answer.
            .childChannelOption(.allowRemoteHalfClosure, value: true)
            .bind(unixDomainSocketPath: socketPath, cleanupExistingSocketFile: true) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(LineFrameDecoder(limit: limit)))
                    return try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
                }
            }
        chmod(socketPath, 0o600)
        defer { unlink(socketPath) }
        logger.info("listening", metadata: ["socket": "\(socketPath)"])
        // NIO removes the socket file when the listening channel has closed, which may be after
        // executeThenClose returns: wait for it, so a server bound at the same path next stays.
        let closed = server.channel.closeFuture
        do {
            try await withThrowingDiscardingTaskGroup { group in
                try await server.executeThenClose { connections in
                    for try await connection in connections {
                        group.addTask { await self.serve(connection) }
                    }
                }
            }
        } catch {
            try? await closed.get()
            throw error
        }
        try? await closed.get()
    }

    private func serve(_ connection: NIOAsyncChannel<ByteBuffer, ByteBuffer>) async {
        guard await isSameUser(connection.channel) else { return }
        do {
            try await connection.executeThenClose { inbound, outbound in
                try await self.answer(inbound, outbound)
            }
        } catch {
            // The client went away; whatever it had been told was accepted already is in the journal.
        }
    }

    private func answer(
        _ inbound: NIOAsyncChannelInboundStream<ByteBuffer>, _ outbound: NIOAsyncChannelOutboundWriter<ByteBuffer>
    ) async throws {
        let writer = LineWriter(outbound: outbound)
        var subscription: Task<Void, Never>?
        defer { subscription?.cancel() }
        do {
            for try await line in inbound {
                switch RPCCodec.decode(Array(line.readableBytesView)) {
                case .failure(let failure):
                    await writer.send(RPCCodec.response(id: failure.id, error: failure.error))
                case .success(let request):
                    if request.method == RPCMethod.subscribe.rawValue, subscription == nil {
                        let events = methods.workspace.events()
                        subscription = Task {
                            for await event in events {
                                await writer.send(RPCCodec.notification(method: "event", params: ControlMethods<C>.json(event)))
                            }
                        }
                    }
                    do {
                        let result = try await methods.perform(request)
                        if request.id != nil { await writer.send(RPCCodec.response(id: request.id, result: result)) }
                    } catch {
                        if request.id != nil { await writer.send(RPCCodec.response(id: request.id, error: error)) }
                    }
                }
            }
        } catch is LineFrameDecoder.LineTooLong {
            logger.warning(
                "request-too-large",
                metadata: ["limit": "\(maxRequestBytes)", "next": "answered with an error and closed that connection"])
            await writer.send(RPCCodec.response(id: nil, error: .tooLarge(limit: maxRequestBytes)))
        }
    }

    /// Refuses (and logs) a peer that runs as another user.
    private func isSameUser(_ channel: any Channel) async -> Bool {
        guard let provider = channel as? any SocketOptionProvider else { return false }
        let credentials: CAutosaveShims_PeerCredentials
        do {
            credentials = try await provider.unsafeGetSocketOption(
                level: SocketOptionLevel(SOL_SOCKET), name: SocketOptionName(SO_PEERCRED)
            ).get()
        } catch {
            return false
        }
        guard credentials.uid == getuid() else {
            logger.warning(
                "client-refused",
                metadata: [
                    "uid": "\(credentials.uid)", "pid": "\(credentials.pid)",
                    "error": "the client runs as another user", "next": "closed the connection",
                ])
            try? await channel.close()
            return false
        }
        return true
    }
}

/// Serialises lines onto a connection shared by responses and event notifications.
actor LineWriter {
    let outbound: NIOAsyncChannelOutboundWriter<ByteBuffer>

    init(outbound: NIOAsyncChannelOutboundWriter<ByteBuffer>) {
        self.outbound = outbound
    }

    func send(_ line: String) async {
        try? await outbound.write(ByteBuffer(string: line + "\n"))
    }
}
