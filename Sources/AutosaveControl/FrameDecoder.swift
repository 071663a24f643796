import NIOCore

/// Runs a `FrameReader` in a channel pipeline: bytes in, `ControlFrame`s out.
///
/// A failure (`FramingError`) reaches the reader of the channel, which answers it and closes.
struct FrameDecoder: ByteToMessageDecoder {
    typealias InboundOut = ControlFrame
    private var reader: FrameReader

    init(limit: Int, announcer: FrameReader.Announcer) {
        reader = FrameReader(limit: limit, announcer: announcer)
    }

    mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        guard let frame = try reader.next(from: &buffer) else { return .needMoreData }
        context.fireChannelRead(wrapInboundOut(frame))
        return .continue
    }

    mutating func decodeLast(context: ChannelHandlerContext, buffer: inout ByteBuffer, seenEOF: Bool) throws -> DecodingState {
        guard let frame = try reader.last(from: &buffer) else { return .needMoreData }
        context.fireChannelRead(wrapInboundOut(frame))
        return .continue
    }
}

/// Socket settings both ends of the control socket share, so large content moves in large steps.
enum ControlSocketTuning {
    /// What the kernel may hold in flight from a client (a Unix socket charges what is queued to
    /// its sender); capped at `net.core.wmem_max`. With the default (~200 KB), 50 MB took
    /// hundreds of write/wake-up rounds.
    static let sendBufferBytes = 4 << 20

    /// How reads grow: small for requests, up to 1 MiB per read for megabytes of content.
    static var readAllocator: AdaptiveRecvByteBufferAllocator {
        AdaptiveRecvByteBufferAllocator(minimum: 64, initial: 2048, maximum: 1 << 20)
    }
}
