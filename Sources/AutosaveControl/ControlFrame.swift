import AutosaveKit
import Glibc
import NIOCore

/// One message of the control socket: a JSON-RPC line and, when the line announced them with
/// `contentBytes`, the raw bytes that followed it.
///
/// Content travels raw so that a 50 MB file costs a copy, not JSON escaping, UTF-8 validation
/// or base64 on both sides.
public struct ControlFrame: Sendable {
    /// The JSON text, without its newline.
    public var line: ByteBuffer
    /// The `contentBytes` bytes that followed the line; nil when it announced none.
    public var content: [UInt8]?

    public init(line: ByteBuffer, content: [UInt8]? = nil) {
        self.line = line
        self.content = content
    }
}

/// Why the byte stream cannot be cut into frames any more. Each ends the connection: the bytes
/// after a bad announcement cannot be told from the next request.
public enum FramingError: Error, Equatable, Sendable {
    /// A line longer than the limit.
    case lineTooLong
    /// A line announced more raw bytes than the limit allows (with the message's id).
    case contentTooLarge(id: JSONValue?, announced: Int)
    /// `contentBytes` is there but is not a whole number of bytes (with the message's id).
    case badContentLength(id: JSONValue?, found: String)
    /// The stream ended `received` bytes into `announced` raw bytes.
    case truncatedContent(id: JSONValue?, received: Int, announced: Int)
}

/// Cuts a control-socket byte stream into frames: a line, then the raw bytes it announced in
/// `params.contentBytes` (requests) or `result.contentBytes` (answers).
///
/// Memory stays bounded by the limit: a line over it, or an announcement over it, fails before
/// its bytes are held. Raw bytes are copied once, into an array of exactly the announced size,
/// as they arrive. A plain state machine over `ByteBuffer`, so it is tested and fuzzed without
/// a channel; `FrameDecoder` runs it in the pipeline.
public struct FrameReader: Sendable {
    /// Where a line announces its raw bytes: `params` in a request, `result` in an answer.
    public enum Announcer: String, Sendable {
        case params, result
    }

    /// The longest line, and the most bytes a line with its content may take.
    public let limit: Int
    public let announcer: Announcer
    /// Bytes of the partial line already searched for a newline: each byte is looked at once, so
    /// a long line arriving in small reads costs linear time, not quadratic.
    private var searched = 0
    /// A line whose raw bytes are still arriving.
    private var pending: PendingContent?

    private struct PendingContent: Sendable {
        var line: ByteBuffer
        var id: JSONValue?
        var content: [UInt8]
        var announced: Int
    }

    public init(limit: Int, announcer: Announcer) {
        self.limit = limit
        self.announcer = announcer
    }

    /// The next complete frame in `buffer` (its bytes consumed), or nil when more bytes are needed.
    ///
    /// - Throws: `FramingError` when the stream cannot be framed any more.
    public mutating func next(from buffer: inout ByteBuffer) throws(FramingError) -> ControlFrame? {
        if pending != nil { return takeContent(from: &buffer) }
        guard let (line, announcement) = try nextLine(from: &buffer) else { return nil }
        guard let (announced, id) = announcement else { return ControlFrame(line: line) }
        // A copy of the line: a slice would pin the socket's buffer while megabytes arrive.
        let content = [UInt8](unsafeUninitializedCapacity: announced) { storage, initialized in
            LargeMemory.adviseHugePages(UnsafeMutableRawBufferPointer(storage))
            initialized = 0
        }
        pending = PendingContent(line: ByteBuffer(buffer: line), id: id, content: content, announced: announced)
        return takeContent(from: &buffer)
    }

    /// The next complete line in `buffer` (consumed with its newline), and the raw byte count it
    /// announces with the message's id (nil: none); nil when more bytes are needed.
    ///
    /// The raw bytes are left in `buffer` for the caller, who hands them on as they arrive (a
    /// client printing a large answer) instead of having `next(from:)` gather them into a frame;
    /// the two are not mixed on one stream.
    /// - Throws: `FramingError` when the stream cannot be framed any more.
    public mutating func nextLine(
        from buffer: inout ByteBuffer
    ) throws(FramingError) -> (line: ByteBuffer, announcement: (count: Int, id: JSONValue?)?)? {
        let unsearched = buffer.readableBytesView.dropFirst(searched)
        guard let newline = unsearched.firstIndex(of: UInt8(ascii: "\n")) else {
            searched = buffer.readableBytes
            if buffer.readableBytes > limit { throw .lineTooLong }
            return nil
        }
        searched = 0
        let length = newline - buffer.readerIndex
        guard length <= limit else { throw .lineTooLong }
        let line = buffer.readSlice(length: length)!
        buffer.moveReaderIndex(forwardBy: 1)
        guard let (announced, id) = try announcement(in: line) else { return (line, nil) }
        guard announced <= limit - length else { throw .contentTooLarge(id: id, announced: announced) }
        return (line, (announced, id))
    }

    /// At the end of the stream: the last line even without its newline.
    ///
    /// - Throws: `.truncatedContent` when the stream ended inside announced raw bytes.
    public mutating func last(from buffer: inout ByteBuffer) throws(FramingError) -> ControlFrame? {
        if let frame = try next(from: &buffer) { return frame }
        if let pending {
            throw .truncatedContent(id: pending.id, received: pending.content.count, announced: pending.announced)
        }
        guard buffer.readableBytes > 0 else { return nil }
        searched = 0
        let line = buffer.readSlice(length: buffer.readableBytes)!
        // A last line may announce content too; none can follow it now.
        if let (announced, id) = try announcement(in: line) {
            guard announced == 0 else { throw .truncatedContent(id: id, received: 0, announced: announced) }
            return ControlFrame(line: line, content: [])
        }
        return ControlFrame(line: line)
    }

    private mutating func takeContent(from buffer: inout ByteBuffer) -> ControlFrame? {
        // Read through the optional, not copied out of it: a copy would share the array and
        // make each append copy megabytes.
        guard let announced = pending?.announced, let received = pending?.content.count else { return nil }
        let count = min(buffer.readableBytes, announced - received)
        buffer.readWithUnsafeReadableBytes { bytes in
            // In place: the array is appended to where it lies, never copied.
            pending!.content.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes.prefix(count)))
            return count
        }
        guard pending!.content.count == pending!.announced, let done = pending.take() else { return nil }
        return ControlFrame(line: done.line, content: done.content)
    }

    private static let announcementKey = Array(#""contentBytes""#.utf8)
    private static let escape = Array(#"\u"#.utf8)

    /// Whether `needle` occurs in `haystack`. By hand: the standard library's generic
    /// `firstRange(of:)` looked up type metadata on every call and was a tenth of the agent's
    /// time under a stream of small requests. The first byte is looked for with `memchr`, which
    /// reads many bytes a step: a byte-by-byte loop over the 1.5 MB answer of a 10,000-version
    /// `history` was a twentieth of the client's time.
    static func contains(_ needle: [UInt8], in haystack: UnsafeRawBufferPointer) -> Bool {
        guard let first = needle.first, let base = haystack.baseAddress, needle.count <= haystack.count else { return false }
        return needle.withUnsafeBytes { key in
            let last = haystack.count - key.count
            var index = 0
            while index <= last, let found = memchr(base + index, Int32(first), last - index + 1) {
                if memcmp(found, key.baseAddress!, key.count) == 0 { return true }
                index = base.distance(to: UnsafeRawPointer(found)) + 1
            }
            return false
        }
    }

    /// The raw byte count a line announces, and its id; nil when it announces none.
    private func announcement(in line: ByteBuffer) throws(FramingError) -> (Int, JSONValue?)? {
        // The key may also be written with escapes (`"content\u0042ytes"`), which the parser decodes.
        guard line.withUnsafeReadableBytes({ Self.contains(Self.announcementKey, in: $0) || Self.contains(Self.escape, in: $0) })
        else { return nil }
        // Only a member of `params` (or `result`) announces; the key inside a string does not.
        guard case .object(let members)? = line.withUnsafeReadableBytes({ try? JSONReader.parse($0) }) else { return nil }
        guard case .object(let fields)? = members.first(where: { $0.key == announcer.rawValue })?.value,
            let value = fields.first(where: { $0.key == "contentBytes" })?.value
        else { return nil }
        let id = members.first { $0.key == "id" }?.value
        guard case .number(let text) = value, let count = Int(text), count >= 0 else {
            throw .badContentLength(id: id, found: value.jsonText)
        }
        return (count, id)
    }
}
