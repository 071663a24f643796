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
                await self.answer(inbound, outbound)
            }
        } catch {
            // The client went away; whatever it had been told was accepted already is in the journal.
        }
    }

    /// Answers a connection's requests in order. Requests are carried out one after another, but
    /// an edit's answer waits for its journal fsync in the answer queue, not in the request loop:
    /// a client that pipelines edits gets them committed together (group commit). At most
    /// `answersInFlight` answers wait, so a client that never reads stops being read from.
    private func answer(
        _ inbound: NIOAsyncChannelInboundStream<ByteBuffer>, _ outbound: NIOAsyncChannelOutboundWriter<ByteBuffer>
    ) async {
        let writer = LineWriter(outbound: outbound)
        let window = AnswerWindow(size: Self.answersInFlight)
        let (answers, queue) = AsyncStream.makeStream(of: PendingAnswer.self)
        await withTaskGroup { group in
            group.addTask {
                for await answer in answers {
                    if let line = await answer.line() { await writer.send(line) }
                    await window.release()
                }
            }
            await readRequests(inbound, writer: writer, window: window, queue: queue)
            queue.finish()
        }
    }

    private func readRequests(
        _ inbound: NIOAsyncChannelInboundStream<ByteBuffer>, writer: LineWriter, window: AnswerWindow,
        queue: AsyncStream<PendingAnswer>.Continuation
    ) async {
        var subscription: Task<Void, Never>?
        defer { subscription?.cancel() }
        do {
            for try await line in inbound {
                await window.acquire()
                switch RPCCodec.decode(Array(line.readableBytesView)) {
                case .failure(let failure):
                    queue.yield(.ready(RPCCodec.response(id: failure.id, error: failure.error)))
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
                        let (result, edit) = try await methods.performPipelined(request)
                        queue.yield(.afterDurable(edit, id: request.id, result: result))
                    } catch {
                        queue.yield(.ready(request.id == nil ? nil : RPCCodec.response(id: request.id, error: error)))
                    }
                }
            }
        } catch is LineFrameDecoder.LineTooLong {
            logger.warning(
                "request-too-large",
                metadata: ["limit": "\(maxRequestBytes)", "next": "answered with an error and closed that connection"])
            queue.yield(.ready(RPCCodec.response(id: nil, error: .tooLarge(limit: maxRequestBytes))))
        } catch {
            // The client went away; whatever it had been told was accepted already is in the journal.
        }
    }

    /// Answers waiting to be sent on one connection, at most.
    static var answersInFlight: Int { 256 }

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

/// One answer in a connection's queue: ready to send, or waiting for its edit to be durable.
enum PendingAnswer: Sendable {
    /// The response line (nil: a notification, which gets none).
    case ready(String?)
    /// A result to send once `edit` is durable; an error response if that fails.
    case afterDurable(AcceptedEdit?, id: JSONValue?, result: JSONValue)

    func line() async -> String? {
        switch self {
        case .ready(let line):
            return line
        case .afterDurable(let edit, let id, let result):
            guard let edit else { return id.map { RPCCodec.response(id: $0, result: result) } }
            do { try await edit.waitUntilDurable() } catch {
                return id.map { RPCCodec.response(id: $0, error: RPCError(answering: error)) }
            }
            return id.map { RPCCodec.response(id: $0, result: result) }
        }
    }
}

/// Counts a connection's answers in flight; `acquire` waits while the window is full.
actor AnswerWindow {
    private let size: Int
    private var used = 0
    private var waiting: [CheckedContinuation<Void, Never>] = []

    init(size: Int) { self.size = size }

    func acquire() async {
        if used < size {
            used += 1
            return
        }
        await withCheckedContinuation { waiting.append($0) }
    }

    func release() {
        if waiting.isEmpty {
            used -= 1
        } else {
            waiting.removeFirst().resume()
        }
    }
}
