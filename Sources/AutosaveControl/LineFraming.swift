import NIOCore

/// Splits the byte stream into newline-terminated messages, refusing any longer than `limit`.
///
/// A client that sends a gigabyte without a newline costs at most `limit` bytes of memory: the
/// decoder fails as soon as the partial line is over the limit, and the connection closes.
struct LineFrameDecoder: ByteToMessageDecoder {
    typealias InboundOut = ByteBuffer
    let limit: Int
    /// Bytes of the partial line already searched for a newline: each byte is looked at once, so
    /// a long line arriving in small reads costs linear time, not quadratic.
    private var searched = 0

    init(limit: Int) {
        self.limit = limit
    }

    /// A line over the limit.
    struct LineTooLong: Error {}

    mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        let unsearched = buffer.readableBytesView.dropFirst(searched)
        guard let newline = unsearched.firstIndex(of: UInt8(ascii: "\n")) else {
            searched = buffer.readableBytes
            if buffer.readableBytes > limit { throw LineTooLong() }
            return .needMoreData
        }
        searched = 0
        let length = newline - buffer.readerIndex
        guard length <= limit else { throw LineTooLong() }
        let line = buffer.readSlice(length: length)!
        buffer.moveReaderIndex(forwardBy: 1)
        context.fireChannelRead(wrapInboundOut(line))
        return .continue
    }

    mutating func decodeLast(context: ChannelHandlerContext, buffer: inout ByteBuffer, seenEOF: Bool) throws -> DecodingState {
        // A last line without its newline is still a request.
        if try decode(context: context, buffer: &buffer) == .continue { return .continue }
        if buffer.readableBytes > 0, let rest = buffer.readSlice(length: buffer.readableBytes) {
            context.fireChannelRead(wrapInboundOut(rest))
        }
        return .needMoreData
    }
}
