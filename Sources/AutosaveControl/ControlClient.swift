import AutosaveKit
import CAutosaveShims
import Glibc
import NIOCore
import NIOPosix

/// A connection to a running agent's control socket, made only once the process listening there
/// is known to be the user's own (or root's).
public final class ControlClient: Sendable {
    let channel: NIOAsyncChannel<ControlFrame, ByteBuffer>

    /// Connects to `socketPath` and checks who listens there (`SO_PEERCRED`) before anything is
    /// sent: a socket path can come from anywhere (`--socket`, `AUTOSAVE_SOCKET`, a pointer file a
    /// cloned repository shipped), and another user could be listening at it.
    ///
    /// - Throws: `ControlClientError.anotherUsersSocket` when the listening process runs as
    ///   another user (not root): the connection is closed with nothing sent;
    ///   `ControlClientError.peerUnknown` when the kernel would not say who it is;
    ///   `ControlClientError.unreachable` when nothing listens there (no agent is running) or the
    ///   path cannot be reached; NIO's error for a path no socket address can hold.
    public init(socketPath: String) async throws {
        let channel: NIOAsyncChannel<ControlFrame, ByteBuffer>
        let peer: EventLoopFuture<CAutosaveShims_PeerCredentials>
        do {
            (channel, peer) = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .channelOption(.recvAllocator, value: ControlSocketTuning.readAllocator)
                .channelOption(.socketOption(.so_sndbuf), value: ControlSocketTuning.sendBufferBytes)
                .connect(unixDomainSocketPath: socketPath) { channel in
                    channel.eventLoop.makeCompletedFuture {
                        let peer = channel.eventLoop.makePromise(of: CAutosaveShims_PeerCredentials.self)
                        try channel.pipeline.syncOperations.addHandler(PeerCredentialsHandler(promise: peer))
                        try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(FrameDecoder(limit: 1 << 34, announcer: .result)))
                        return (try NIOAsyncChannel<ControlFrame, ByteBuffer>(wrappingChannelSynchronously: channel), peer.futureResult)
                    }
                }
        } catch let error as IOError {
            throw ControlClientError.unreachable(socketPath: socketPath, errno: error.errnoCode)
        }
        do {
            try await Self.check(peer, socketPath: socketPath)
        } catch {
            try? await channel.executeThenClose { _, _ in }
            throw error
        }
        self.channel = channel
    }

    /// Refuses a listening process of another user: only this user's own processes, or root's
    /// (which could act as anyone anyway), may be talked to.
    private static func check(_ peer: EventLoopFuture<CAutosaveShims_PeerCredentials>, socketPath: String) async throws(ControlClientError) {
        let credentials: CAutosaveShims_PeerCredentials
        do {
            credentials = try await peer.get()
        } catch {
            throw .peerUnknown(socketPath: socketPath, reason: "\(error)")
        }
        try admit(credentials, socketPath: socketPath)
    }

    /// Refuses a peer that is neither this user nor root.
    static func admit(_ credentials: CAutosaveShims_PeerCredentials, socketPath: String) throws(ControlClientError) {
        guard credentials.uid == geteuid() || credentials.uid == 0 else {
            throw .anotherUsersSocket(socketPath: socketPath, uid: credentials.uid, pid: credentials.pid)
        }
    }

    /// Sends one request and returns its result, or throws the agent's error.
    ///
    /// - Throws: `ControlClientError.refused` with the agent's error message;
    ///   `ControlClientError.unreadableAnswer` when the result is not what `Method.Result` reads;
    ///   `ControlClientError.disconnected` when no answer came.
    public func call<Method: ControlMethod>(_ request: Method) async throws -> Method.Result {
        try await call(request, content: nil).result
    }

    /// Sends one request with raw bytes after its line (announced as `contentBytes`), and returns
    /// its result with the raw bytes that followed the answer (when its result announced some).
    ///
    /// Content goes as it is: no JSON escaping, no base64, one copy on each side.
    public func call<Method: ControlMethod>(_ request: Method, content: RequestContent?) async throws -> ControlAnswer<Method.Result> {
        try await channel.executeThenClose { inbound, outbound in
            try await self.exchange(
                Method.method, request.params, content: content, reading: Method.Result.self, inbound: inbound, outbound: outbound,
                keepReading: nil)
        }
    }

    /// Subscribes to the agent's events, and reads the connection until the agent closes it:
    /// `onEvent` gets the answer (`{"subscribed":true}`) with a nil method, then each
    /// notification with its method (`event`, or `dropped` when the subscriber fell too far
    /// behind and is let go).
    public func subscribe(onEvent: @escaping @Sendable (_ method: String?, _ value: JSONValue) -> Void) async throws {
        _ = try await channel.executeThenClose { inbound, outbound in
            try await self.exchange(
                .subscribe, SubscribeMethod().params, content: nil, reading: SubscribeMethod.Result.self, inbound: inbound,
                outbound: outbound, keepReading: onEvent)
        }
    }

    /// A request's line, newline included: the client's only request on its connection, id 1.
    static func requestLine(_ method: RPCMethod, _ params: [JSONMember]) -> String {
        JSONValue.object([
            member("jsonrpc", .string("2.0")), member("id", .number("1")), member("method", .string(method.rawValue)),
            member("params", .object(params)),
        ]).jsonText + "\n"
    }

    /// The answer's result as `Method` reads it.
    static func read<Method: ControlMethod>(_ method: Method.Type, _ result: JSONValue) throws(ControlClientError) -> Method.Result {
        do {
            return try Method.Result(json: result)
        } catch {
            throw .unreadableAnswer(method: Method.method.rawValue, reason: error.message)
        }
    }

    private func exchange<Result: ControlResult>(
        _ method: RPCMethod, _ params: [JSONMember], content: RequestContent?, reading: Result.Type,
        inbound: NIOAsyncChannelInboundStream<ControlFrame>, outbound: NIOAsyncChannelOutboundWriter<ByteBuffer>,
        keepReading: (@Sendable (String?, JSONValue) -> Void)?
    ) async throws -> ControlAnswer<Result> {
        var params = params
        if let content { params.append(member("contentBytes", .number(String(content.count)))) }
        // The line, then the content from where it was read: one write, no copy of the content.
        do {
            try await outbound.write(contentsOf: [ByteBuffer(string: Self.requestLine(method, params))] + (content.map { [$0.buffer] } ?? []))
        } catch {
            // An agent that cannot serve this client answers unasked and closes (`outOfDescriptors`),
            // maybe before the request went out: that answer, read already, says why; the write's error does not.
            var refusal: ControlClientError?
            do {
                for try await frame in inbound where refusal == nil {
                    if case .refusal(let found)? = try? IncomingMessage<Result>(frame, answering: method) { refusal = found }
                }
            } catch {}
            throw refusal ?? error
        }
        var answer: ControlAnswer<Result>?
        for try await frame in inbound {
            switch try IncomingMessage<Result>(frame, answering: method) {
            case .refusal(let refusal): throw refusal
            case .answer(let result):
                answer = ControlAnswer(result: result, content: frame.content)
                guard let keepReading else { return answer! }
                // A subscription: the answer says it is in place; events follow.
                keepReading(nil, result.json)
            case .notification(let method, let params): keepReading?(method, params)
            case .other: continue
            }
        }
        guard let answer else { throw ControlClientError.disconnected }
        return answer
    }

    /// A line as JSON, read where the socket put it: a long answer is not copied out first.
    static func parse(_ line: ByteBuffer) throws(JSONReader.SyntaxError) -> JSONValue {
        try line.withUnsafeReadableBytes { raw in Result { () throws(JSONReader.SyntaxError) in try JSONReader.parse(raw) } }.get()
    }

    /// The agent's error, when the message is one.
    static func refusal(in members: [JSONMember]) -> ControlClientError? {
        guard let error = members.first(where: { $0.key == "error" })?.value, case .object(let body) = error else { return nil }
        let message = body.first { $0.key == "message" }?.value
        return .refused(message.flatMap { if case .string(let text) = $0 { text } else { nil } } ?? "error")
    }
}

/// An answer's result, and the raw bytes that followed it (its `result.contentBytes`).
public struct ControlAnswer<Result: Sendable>: Sendable {
    public var result: Result
    public var content: [UInt8]?
}

/// Why a client request failed.
public enum ControlClientError: Error, Equatable, CustomStringConvertible {
    /// The agent answered with an error.
    case refused(String)
    /// The agent closed the connection before answering.
    case disconnected
    /// The connection ended `received` bytes into the `announced` raw bytes after the answer.
    case truncated(received: Int, announced: Int)
    /// The agent's answer to `method` is not its result: `reason` names the member.
    case unreadableAnswer(method: String, reason: String)
    /// The process listening at `socketPath` runs as another user (`uid`, process `pid`): nothing
    /// was sent to it and the connection is closed.
    case anotherUsersSocket(socketPath: String, uid: uid_t, pid: Int32)
    /// The kernel would not tell who listens at `socketPath`; nothing was sent.
    case peerUnknown(socketPath: String, reason: String)
    /// Connecting to `socketPath` failed with `errno` (`ECONNREFUSED`, `ENOENT`: nothing listens
    /// there; `EACCES`: a directory on the way is closed to this user).
    case unreachable(socketPath: String, errno: Int32)

    public var description: String { description(route: nil) }

    /// The description, with `route` (how the client came to the socket: `named by --socket`)
    /// after the socket's path.
    public func description(route: String?) -> String {
        let how = route.map { " (\($0))" } ?? ""
        return switch self {
        case .refused(let message): message
        case .disconnected: "the agent closed the connection before answering"
        case .truncated(let received, let announced):
            "the agent closed the connection \(received) bytes into the \(announced) of its answer"
        case .unreadableAnswer(let method, let reason):
            "the agent's answer to `\(method)` cannot be read (\(reason)); is it an agent of another version? Restart it with `autosave run`"
        case .anotherUsersSocket(let socketPath, let uid, let pid):
            "refused the socket \(socketPath)\(how): the process listening there (pid \(pid)) runs as \(UserNames.describe(uid)), "
                + "not as you (\(UserNames.describe(geteuid()))), so nothing was sent to it"
        case .unreachable(let socketPath, let code):
            "cannot connect to \(socketPath)\(how): \(String(cString: strerror(code)))"
        case .peerUnknown(let socketPath, let reason):
            "refused the socket \(socketPath)\(how): cannot tell who listens there (\(reason)), so nothing was sent to it"
        }
    }

    /// Whether connecting failed: nothing listens there, or the path cannot be reached.
    public var isUnreachable: Bool {
        if case .unreachable = self { true } else { false }
    }

    /// Whether it came before anything was sent: connecting, or finding out who listens there.
    public var isConnecting: Bool {
        switch self {
        case .unreachable, .anotherUsersSocket, .peerUnknown: true
        case .refused, .disconnected, .truncated, .unreadableAnswer: false
        }
    }

    /// What to do about a socket of another user, for a message that already said whose it is.
    public static let anotherUsersSocketAdvice =
        "If it is that user's agent, run the command as them; if you expected your own agent there, yours is not running: "
        + "remove that socket, or whatever names it, and start yours with `autosave run`"
}
