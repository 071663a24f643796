import AutosaveKit
import NIOCore
import NIOPosix

/// A connection to a running agent's control socket.
public final class ControlClient: Sendable {
    let channel: NIOAsyncChannel<ControlFrame, ByteBuffer>

    /// Connects to `socketPath`.
    ///
    /// - Throws: when nothing listens there (no agent is running).
    public init(socketPath: String) async throws {
        channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .channelOption(.recvAllocator, value: ControlSocketTuning.readAllocator)
            .channelOption(.socketOption(.so_sndbuf), value: ControlSocketTuning.sendBufferBytes)
            .connect(unixDomainSocketPath: socketPath) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(FrameDecoder(limit: 1 << 34, announcer: .result)))
                    return try NIOAsyncChannel<ControlFrame, ByteBuffer>(wrappingChannelSynchronously: channel)
                }
            }
    }

    /// Sends one request and returns its result, or throws the agent's error.
    ///
    /// With `onEvent` (a subscription), the connection is read until the agent closes it: the
    /// answer is handed over with a nil method, then each notification with its method (`event`,
    /// or `dropped` when the subscriber fell too far behind and is let go).
    public func call(
        _ method: RPCMethod, _ params: [JSONMember] = [], onEvent: (@Sendable (_ method: String?, _ value: JSONValue) -> Void)? = nil
    ) async throws -> JSONValue {
        try await channel.executeThenClose { inbound, outbound in
            try await self.exchange(method, params, content: nil, inbound: inbound, outbound: outbound, keepReading: onEvent).result
        }
    }

    /// Sends one request with raw bytes after its line (announced as `contentBytes`), and returns
    /// its result with the raw bytes that followed the answer (when its result announced some).
    ///
    /// Content goes as it is: no JSON escaping, no base64, one copy on each side.
    public func call(_ method: RPCMethod, _ params: [JSONMember] = [], content: RequestContent?) async throws -> ControlAnswer {
        try await channel.executeThenClose { inbound, outbound in
            try await self.exchange(method, params, content: content, inbound: inbound, outbound: outbound, keepReading: nil)
        }
    }

    private func exchange(
        _ method: RPCMethod, _ params: [JSONMember], content: RequestContent?, inbound: NIOAsyncChannelInboundStream<ControlFrame>,
        outbound: NIOAsyncChannelOutboundWriter<ByteBuffer>, keepReading: (@Sendable (String?, JSONValue) -> Void)?
    ) async throws -> ControlAnswer {
        var params = params
        if let content { params.append(member("contentBytes", .number(String(content.count)))) }
        let request = JSONValue.object([
            member("jsonrpc", .string("2.0")), member("id", .number("1")), member("method", .string(method.rawValue)),
            member("params", .object(params)),
        ])
        // The line, then the content from where it was read: one write, no copy of the content.
        try await outbound.write(contentsOf: [ByteBuffer(string: request.jsonText + "\n")] + (content.map { [$0.buffer] } ?? []))
        var answer: ControlAnswer?
        for try await frame in inbound {
            // Read where the socket put it: a long answer is not copied out first.
            let parsed = frame.line.withUnsafeReadableBytes { raw in Result { () throws(JSONReader.SyntaxError) in try JSONReader.parse(raw) } }
            guard case .object(let members) = try parsed.get() else { continue }
            if let error = members.first(where: { $0.key == "error" })?.value, case .object(let body) = error {
                let message = body.first { $0.key == "message" }?.value
                throw ControlClientError.refused(message.flatMap { if case .string(let text) = $0 { text } else { nil } } ?? "error")
            }
            if let value = members.first(where: { $0.key == "result" })?.value {
                answer = ControlAnswer(result: value, content: frame.content)
                guard let keepReading else { return answer! }
                // A subscription: the answer says it is in place; events follow.
                keepReading(nil, value)
                continue
            }
            if let params = members.first(where: { $0.key == "params" })?.value {
                keepReading?(members.first { $0.key == "method" }?.value.stringValue ?? "", params)
            }
        }
        guard let answer else { throw ControlClientError.disconnected }
        return answer
    }
}

/// An answer's result, and the raw bytes that followed it (its `result.contentBytes`).
public struct ControlAnswer: Sendable {
    public var result: JSONValue
    public var content: [UInt8]?
}

/// Why a client request failed.
public enum ControlClientError: Error, CustomStringConvertible {
    /// The agent answered with an error.
    case refused(String)
    /// The agent closed the connection before answering.
    case disconnected

    public var description: String {
        switch self {
        case .refused(let message): message
        case .disconnected: "the agent closed the connection before answering"
        }
    }
}
