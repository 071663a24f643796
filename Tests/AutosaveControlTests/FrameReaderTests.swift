import AutosaveControl
import AutosaveKit
import NIOCore
import PropertyBased
import Testing

/// The control socket's framing: lines, and the raw bytes a line announces with `contentBytes`,
/// cut out of a byte stream however the kernel happens to split it.
@Suite struct FrameReaderTests {
    /// A message as sent: a JSON line, and raw content when it announces some.
    struct Sent: Equatable, CustomStringConvertible {
        var line: String
        var content: [UInt8]?
        var description: String { "\(line) + \(content.map { "\($0.count) raw bytes" } ?? "nothing")" }

        /// The message a scenario step stands for: a plain request, a request whose strings
        /// mention `contentBytes`, or a write whose raw content is full of newlines and braces.
        init(step: Int) {
            switch step % 4 {
            case 0:
                line = #"{"jsonrpc":"2.0","id":\#(step),"method":"status"}"#
            case 1:
                line = #"{"jsonrpc":"2.0","id":\#(step),"method":"write","params":{"path":"\"contentBytes\": 9","content":"contentBytes"}}"#
            default:
                let pattern = Array("{\"contentBytes\":3}\n\n\u{0}\u{FF}".utf8)
                let bytes = (0..<(step % 700)).map { pattern[($0 + step) % pattern.count] }
                line = #"{"jsonrpc":"2.0","id":\#(step),"method":"write","params":{"path":"a","contentBytes":\#(bytes.count)}}"#
                content = bytes
            }
        }

        var bytes: [UInt8] { Array((line + "\n").utf8) + (content ?? []) }
    }

    /// Feeds `stream` to a reader in pieces of the given sizes (cycled); returns what it read.
    func read(_ stream: [UInt8], in pieces: [Int], limit: Int = 1 << 20) throws(FramingError) -> [Sent] {
        var reader = FrameReader(limit: limit, announcer: .params)
        var buffer = ByteBuffer()
        var frames: [Sent] = []
        var offset = 0
        var piece = 0
        while offset < stream.count {
            let size = max(1, pieces.isEmpty ? stream.count : pieces[piece % pieces.count])
            buffer.writeBytes(stream[offset..<min(stream.count, offset + size)])
            offset += size
            piece += 1
            while let frame = try reader.next(from: &buffer) { frames.append(Sent(frame)) }
        }
        while let frame = try reader.last(from: &buffer) { frames.append(Sent(frame)) }
        return frames
    }

    @Test func framesComeOutAsTheyWentInHoweverTheStreamIsCut() throws {
        var random = Xoshiro(seed: (0x6672_616D, 0x6573_2121, 0x7261_7721, 0x6279_7465))
        let steps = Gen.int(in: 0...100_000).array(of: 1...12)
        let cuts = Gen.int(in: 1...900).array(of: 0...6)
        for index in 0..<400 {
            let sent = steps.run(using: &random).map(Sent.init(step:))
            let pieces = cuts.run(using: &random)
            let stream = sent.flatMap(\.bytes)
            #expect(try read(stream, in: pieces) == sent, "case \(index), cut in \(pieces)")
        }
    }

    @Test func aLastLineWithoutItsNewlineIsStillAFrame() throws {
        let line = #"{"jsonrpc":"2.0","id":1,"method":"status"}"#
        #expect(try read(Array(line.utf8), in: [7]) == [Sent(line: line)])
    }

    @Test func emptyContentIsAFrameWithNoBytes() throws {
        let line = #"{"jsonrpc":"2.0","id":1,"method":"write","params":{"path":"a","contentBytes":0}}"#
        let next = #"{"jsonrpc":"2.0","id":2,"method":"status"}"#
        #expect(try read(Array((line + "\n" + next + "\n").utf8), in: []) == [Sent(line: line, content: []), Sent(line: next)])
    }

    @Test func theClientsReaderTakesTheAnnouncementFromTheResult() throws {
        var reader = FrameReader(limit: 1 << 20, announcer: .result)
        var buffer = ByteBuffer(string: #"{"jsonrpc":"2.0","id":1,"result":{"path":"a","contentBytes":3}}"# + "\nx\ny")
        let frame = try #require(try reader.next(from: &buffer))
        #expect(frame.content == Array("x\ny".utf8))
        // A request's params announce nothing to a client.
        var request = ByteBuffer(string: #"{"jsonrpc":"2.0","id":1,"params":{"contentBytes":3}}"# + "\n")
        #expect(try reader.next(from: &request)?.content == nil)
    }

    @Test func aKeyWrittenWithEscapesAnnouncesToo() throws {
        let line = #"{"jsonrpc":"2.0","id":1,"method":"write","params":{"path":"a","content\u0042ytes":3}}"#
        #expect(try read(Array((line + "\nabc").utf8), in: [5]) == [Sent(line: line, content: Array("abc".utf8))])
    }

    @Test func aLastLineThatAnnouncesBytesCannotHaveThem() {
        let line = #"{"jsonrpc":"2.0","id":4,"method":"write","params":{"path":"a","contentBytes":5}}"#
        #expect(throws: FramingError.truncatedContent(id: .number("4"), received: 0, announced: 5)) {
            try read(Array(line.utf8), in: [])
        }
    }

    @Test func anAnnouncementOverTheLimitFailsBeforeItsBytesAreHeld() {
        let line = #"{"jsonrpc":"2.0","id":7,"method":"write","params":{"path":"a","contentBytes":5000}}"#
        #expect(throws: FramingError.contentTooLarge(id: .number("7"), announced: 5000)) {
            try read(Array((line + "\n").utf8), in: [], limit: 4096)
        }
    }

    @Test func aLengthThatIsNotAWholeNumberStopsTheStream() {
        for bad in [#""12""#, "-1", "1.5", "null", "99999999999999999999999"] {
            let line = #"{"jsonrpc":"2.0","id":3,"method":"write","params":{"path":"a","contentBytes":\#(bad)}}"#
            #expect(throws: FramingError.badContentLength(id: .number("3"), found: bad), "\(bad)") {
                try read(Array((line + "\nabc").utf8), in: [])
            }
        }
    }

    @Test func aStreamEndingInsideTheContentSaysHowFarItGot() {
        let line = #"{"jsonrpc":"2.0","id":"w","method":"write","params":{"path":"a","contentBytes":100}}"#
        #expect(throws: FramingError.truncatedContent(id: .string("w"), received: 10, announced: 100)) {
            try read(Array((line + "\n").utf8) + [UInt8](repeating: 65, count: 10), in: [3])
        }
    }

    @Test func aLineOverTheLimitFailsWithoutItsNewline() {
        #expect(throws: FramingError.lineTooLong) {
            try read([UInt8](repeating: 120, count: 10_000), in: [1000], limit: 4096)
        }
    }
}

extension FrameReaderTests.Sent {
    init(_ frame: ControlFrame) {
        self.init(line: String(buffer: frame.line), content: frame.content)
    }

    init(line: String, content: [UInt8]? = nil) {
        self.line = line
        self.content = content
    }
}
