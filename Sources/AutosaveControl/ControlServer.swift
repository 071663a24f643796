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

    /// Listens on `socket` (SwiftNIO owns it from here on), with a spare descriptor in reserve to
    /// refuse clients with when the process has none left.
    private func listen(
        on socket: ListeningSocket, limit: Int, admission: ClientAdmission
    ) async throws -> NIOAsyncChannel<NIOAsyncChannel<ControlFrame, ByteBuffer>, Never> {
        try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(SpareDescriptor(listening: socket.descriptor, admission: admission))
                }
            }
            // A client that sends its requests and then shuts down its side still gets every answer.
            .childChannelOption(.allowRemoteHalfClosure, value: true)
            // The kernel's default send buffer is kept: what it holds for a subscriber that lags
            // is not seen as its backlog, and a larger one would hide megabytes of events.
            .childChannelOption(.recvAllocator, value: ControlSocketTuning.readAllocator)
            .bind(socket.descriptor) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(FrameDecoder(limit: limit, announcer: .params)))
                    // Half closure: a subscriber let go reads everything sent to it, then the end.
                    return try NIOAsyncChannel<ControlFrame, ByteBuffer>(
                        wrappingChannelSynchronously: channel, configuration: .init(isOutboundHalfClosureEnabled: true))
                }
            }
    }

    /// Why the control socket could not listen, in words: the path and the reason.
    public struct ListenError: Error, CustomStringConvertible {
        public let path: String
        public let reason: String
        public var description: String { "cannot listen on \(path): \(reason)" }
    }

    /// Serves until the task is cancelled; the socket file is removed on the way out.
    ///
    /// At most `DescriptorBudget.clients` clients are served at once (measured now, from the
    /// descriptor limit); others are answered `outOfDescriptors` and closed, as are clients that
    /// come while the process has no descriptor left (see `ClientAdmission`, `SpareDescriptor`).
    ///
    /// - Parameter listening: called with the socket's path once clients can connect.
    /// - Throws: `ListenError` when the socket cannot be bound.
    public func run(listening: @Sendable (String) -> Void = { _ in }) async throws {
        let limit = maxRequestBytes
        // SwiftNIO's loops (three descriptors each) are made first, so that the budget counts them.
        _ = MultiThreadedEventLoopGroup.singleton
        let admission = ClientAdmission(budget: .measure(), logger: logger)
        let socket: ListeningSocket
        do { socket = try ListeningSocket.bind(at: socketPath) } catch { throw ListenError(path: socketPath, reason: error.description) }
        let server: NIOAsyncChannel<NIOAsyncChannel<ControlFrame, ByteBuffer>, Never>
        do {
            server = try await listen(on: socket, limit: limit, admission: admission)
        } catch let error as IOError {
            throw ListenError(path: socketPath, reason: String(cString: strerror(error.errnoCode)))
        } catch {
            throw ListenError(path: socketPath, reason: "\(error)")
        }
        chmod(socketPath, 0o600)
        defer { unlink(socketPath) }
        logger.info("listening", metadata: ["socket": "\(socketPath)"])
        listening(socketPath)
        // Closed before the file goes (the deferred unlink), so a server bound at the path next stays.
        let closed = server.channel.closeFuture
        do {
            try await withThrowingDiscardingTaskGroup { group in
                try await server.executeThenClose { connections in
                    for try await connection in connections {
                        let executor = EventLoopTaskExecutor(connection.channel.eventLoop)
                        guard admission.admit() else {
                            group.addTask(executorPreference: executor) { await Self.refuse(connection, admission.refusal(.clients)) }
                            continue
                        }
                        group.addTask(executorPreference: executor) {
                            defer { admission.leave() }
                            await self.serve(connection)
                        }
                    }
                }
            }
        } catch {
            try? await closed.get()
            throw error
        }
        try? await closed.get()
    }

    /// Tells a client it is not served, and why, then closes its connection.
    private static func refuse(_ connection: NIOAsyncChannel<ControlFrame, ByteBuffer>, _ answer: String) async {
        try? await connection.executeThenClose { _, outbound in
            try await outbound.write(ByteBuffer(string: answer + "\n"))
        }
    }

    private func serve(_ connection: NIOAsyncChannel<ControlFrame, ByteBuffer>) async {
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
        _ inbound: NIOAsyncChannelInboundStream<ControlFrame>, _ outbound: NIOAsyncChannelOutboundWriter<ByteBuffer>
    ) async {
        let writer = MessageWriter(outbound: outbound)
        let queue = AnswerQueue(size: Self.answersInFlight)
        await withTaskGroup { group in
            group.addTask {
                while let batch = await queue.next() {
                    var messages: [OutgoingMessage] = []
                    for answer in batch {
                        if let message = await answer.message() { messages.append(message) }
                    }
                    await writer.send(messages)
                    queue.release(batch.count)
                    if batch.contains(where: \.isShutdownAnswer) { methods.requestShutdown() }
                }
            }
            await withDiscardingTaskGroup { reading in
                await readRequests(inbound, writer: writer, queue: queue, subscriptions: &reading)
                // The connection's requests ended: its event subscription, if it made one, ends too.
                reading.cancelAll()
            }
            queue.finish()
        }
    }

    /// Reads and carries out requests until the client stops sending; a `subscribe` adds the
    /// task that forwards events to `subscriptions` (one per connection).
    private func readRequests(
        _ inbound: NIOAsyncChannelInboundStream<ControlFrame>, writer: MessageWriter, queue: AnswerQueue,
        subscriptions: inout DiscardingTaskGroup
    ) async {
        var isSubscribed = false
        do {
            for try await frame in inbound {
                switch frame.line.withUnsafeReadableBytes({ RPCCodec.decode($0) }) {
                case .failure(let failure):
                    await queue.push(.ready(RPCCodec.response(id: failure.id, error: failure.error)))
                case .success(var request):
                    request.content = frame.content
                    // A subscribe whose params cannot be read is answered below, with the reason.
                    let subscription = request.method == RPCMethod.subscribe.rawValue && !isSubscribed
                        ? try? SubscribeMethod(params: request.params, content: nil) : nil
                    if let filter = subscription?.filter, !filter.isEmpty {
                        isSubscribed = true
                        let clock = await subscribeToChanges(since: filter, writer: writer, subscriptions: &subscriptions)
                        await queue.push(.outcome(MethodOutcome(result: SubscribeMethod.Result(clock: clock.description).json), id: request.id))
                        continue
                    }
                    if subscription != nil {
                        isSubscribed = true
                        let logger = self.logger
                        let events = methods.workspace.subscribe { backlog in
                            logger.warning(
                                "subscriber-dropped",
                                metadata: [
                                    "backlog": "\(backlog)",
                                    "next": "it gets the events held for it, then a `dropped` notice with how many it missed, then the end of its connection",
                                ])
                        }
                        subscriptions.addTask {
                            for await event in events.events {
                                await writer.send([OutgoingMessage(line: RPCCodec.notification(method: "event", params: ControlMethods<C>.json(event)))])
                            }
                            // Told, then let go: a subscriber that cannot keep up must not wait for ever.
                            guard let missed = events.end() else { return }
                            await writer.send([
                                OutgoingMessage(
                                    line: RPCCodec.notification(method: DroppedNotice.method, params: DroppedNotice(missed: missed).json))
                            ])
                            await writer.close()
                        }
                    }
                    do {
                        let outcome = try await methods.performPipelined(request)
                        if request.method == RPCMethod.shutdown.rawValue {
                            await queue.push(.shutdownAnswer(request.id.map { String(decoding: RPCCodec.response(id: $0, written: outcome.result).joined(), as: UTF8.self) }))
                        } else {
                            await queue.push(.outcome(outcome, id: request.id))
                        }
                    } catch {
                        await queue.push(.ready(request.id == nil ? nil : RPCCodec.response(id: request.id, error: error)))
                    }
                }
            }
        } catch let error as FramingError {
            await queue.push(.ready(answer(error)))
        } catch {
            // The client went away; whatever it had been told was accepted already is in the journal.
        }
    }

    /// Starts sending the tree's changes matching `globs` to a subscriber, one `changes`
    /// notification per batch recorded (coalesced while it is being sent the last), the first
    /// answering `filter.since` when given; returns the clock it counts from.
    private func subscribeToChanges(
        since filter: ChangeFilter, writer: MessageWriter, subscriptions: inout DiscardingTaskGroup
    ) async -> ChangeClock {
        let workspace = methods.workspace
        let globs = filter.patterns
        // Signals first: a change recorded between the clock and the first signal is not lost.
        let (id, signals) = await workspace.changeSignals()
        let start = await workspace.changeClock()
        subscriptions.addTask {
            var clock: ChangeClock? = filter.since == nil ? start : filter.clock
            if filter.since != nil {
                let answer = await workspace.recordedChanges(since: clock, globs: globs)
                clock = answer.clock
                await writer.send([OutgoingMessage(line: RPCCodec.notification(method: "changes", params: answer.json))])
            }
            for await _ in signals {
                let answer = await workspace.recordedChanges(since: clock, globs: globs)
                clock = answer.clock
                guard answer.isFresh || !answer.changes.isEmpty else { continue }
                await writer.send([OutgoingMessage(line: RPCCodec.notification(method: "changes", params: answer.json))])
            }
            await workspace.endChangeSignals(id)
        }
        return filter.since == nil ? start : (filter.clock ?? start)
    }

    /// The error response to a stream that cannot be framed any more (the connection then closes),
    /// logged when the limit was what stopped it.
    private func answer(_ error: FramingError) -> String {
        let next = "answered with an error and closed that connection"
        switch error {
        case .lineTooLong:
            logger.warning("request-too-large", metadata: ["limit": "\(maxRequestBytes)", "next": "\(next)"])
            return RPCCodec.response(id: nil, error: .tooLarge(limit: maxRequestBytes))
        case .contentTooLarge(let id, let announced):
            logger.warning(
                "request-too-large", metadata: ["limit": "\(maxRequestBytes)", "contentBytes": "\(announced)", "next": "\(next)"])
            return RPCCodec.response(id: id, error: .tooLarge(limit: maxRequestBytes))
        case .badContentLength(let id, let found):
            return RPCCodec.response(
                id: id,
                error: .invalidParams(
                    "`contentBytes` must be a whole number of bytes, got \(found); closing the connection, "
                        + "since the bytes after the line cannot be told from the next request"))
        case .truncatedContent(let id, let received, let announced):
            return RPCCodec.response(
                id: id,
                error: .invalidRequest(
                    "the connection ended \(received) bytes into the \(announced) raw bytes `contentBytes` announced; nothing was written"))
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

/// Serialises messages onto a connection shared by responses and event notifications.
actor MessageWriter {
    let outbound: NIOAsyncChannelOutboundWriter<ByteBuffer>

    init(outbound: NIOAsyncChannelOutboundWriter<ByteBuffer>) {
        self.outbound = outbound
    }

    /// Sends `messages` in one write (one flush, one system call when the socket takes them all):
    /// each line, its newline, then its raw bytes.
    func send(_ messages: [OutgoingMessage]) async {
        guard !messages.isEmpty else { return }
        var buffer = ByteBuffer()
        buffer.reserveCapacity(messages.reduce(0) { $0 + $1.line.reduce(0) { $0 + $1.count } + 1 + ($1.content?.count ?? 0) })
        buffer.withUnsafeMutableWritableBytes { LargeMemory.adviseHugePages($0) }
        for message in messages {
            for piece in message.line { buffer.writeBytes(piece) }
            buffer.writeInteger(UInt8(ascii: "\n"))
            message.content?.forEachChunk { buffer.writeBytes($0) }
        }
        try? await outbound.write(buffer)
    }

    /// Ends the sending side once what was sent is written (half closure): the client reads
    /// the end after it, and its own requests are still read until it closes.
    func close() {
        outbound.finish()
    }
}
