import AutosaveKit
import NIOCore
import NIOPosix

/// A connection to a running agent's control socket.
public final class ControlClient: Sendable {
    let channel: NIOAsyncChannel<ByteBuffer, ByteBuffer>

    /// Connects to `socketPath`.
    ///
    /// - Throws: when nothing listens there (no agent is running).
    public init(socketPath: String) async throws {
        channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connect(unixDomainSocketPath: socketPath) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(LineFrameDecoder(limit: 1 << 34)))
                    return try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
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
            try await self.exchange(method, params, inbound: inbound, outbound: outbound, keepReading: onEvent, stopAfterResponse: onEvent == nil)
        }
    }

    private func exchange(
        _ method: RPCMethod, _ params: [JSONMember], inbound: NIOAsyncChannelInboundStream<ByteBuffer>,
        outbound: NIOAsyncChannelOutboundWriter<ByteBuffer>, keepReading: (@Sendable (String?, JSONValue) -> Void)?,
        stopAfterResponse: Bool
    ) async throws -> JSONValue {
        let request = JSONValue.object([
            member("jsonrpc", .string("2.0")), member("id", .number("1")), member("method", .string(method.rawValue)),
            member("params", .object(params)),
        ])
        try await outbound.write(ByteBuffer(string: request.jsonText + "\n"))
        var result: JSONValue?
        for try await line in inbound {
            // Read where the socket put it: a 50 MB answer is not copied out first.
            let answer = line.withUnsafeReadableBytes { raw in Result { () throws(JSONReader.SyntaxError) in try JSONReader.parse(raw) } }
            guard case .object(let members) = try answer.get() else { continue }
            if let error = members.first(where: { $0.key == "error" })?.value, case .object(let body) = error {
                let message = body.first { $0.key == "message" }?.value
                throw ControlClientError.refused(message.flatMap { if case .string(let text) = $0 { text } else { nil } } ?? "error")
            }
            if let value = members.first(where: { $0.key == "result" })?.value {
                result = value
                if stopAfterResponse { return value }
                // A subscription: the answer says it is in place; events follow.
                keepReading?(nil, value)
                continue
            }
            if let params = members.first(where: { $0.key == "params" })?.value {
                keepReading?(members.first { $0.key == "method" }?.value.stringValue ?? "", params)
            }
        }
        guard let result else { throw ControlClientError.disconnected }
        return result
    }
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
