/// What a run of bytes holds that a rope must know without reading it again: its length and
/// its line breaks. Summaries of adjacent runs add up, so a tree of chunks finds line N, or the
/// line count, in O(log n).
///
/// A line ends at `\n`, at `\r\n`, or at a `\r` not followed by `\n` (as `LineIndex` and LSP
/// count them). A `\r\n` split between two runs is one break: `+` sees the pair at the seam.
struct TextSummary: Sendable, Equatable {
    /// Bytes in the run.
    var count = 0
    var lineFeeds = 0
    var carriageReturns = 0
    /// `\r\n` pairs wholly inside the run.
    var pairs = 0
    var startsWithLineFeed = false
    var endsWithCarriageReturn = false

    /// Line breaks as the run counts them alone: a trailing `\r` counts, since nothing follows
    /// it here (a parent takes it back when its next sibling starts with `\n`).
    var breaks: Int { lineFeeds + carriageReturns - pairs }

    static let lineFeed = UInt8(ascii: "\n")
    static let carriageReturn = UInt8(ascii: "\r")

    init() {}

    /// Counts the breaks of `bytes`: 32 bytes at a time, and a look for `\r\n` pairs only in
    /// text that has a `\r` at all. (Every byte of a large write goes through here once.)
    init(_ bytes: UnsafeBufferPointer<UInt8>) {
        count = bytes.count
        guard let first = bytes.first, let last = bytes.last else { return }
        startsWithLineFeed = first == Self.lineFeed
        endsWithCarriageReturn = last == Self.carriageReturn
        (lineFeeds, carriageReturns) = Self.breakBytes(in: bytes)
        guard carriageReturns > 0, bytes.count > 1 else { return }
        for index in 0..<(bytes.count - 1) where bytes[index] == Self.carriageReturn && bytes[index + 1] == Self.lineFeed {
            pairs += 1
        }
    }

    /// How many `\n` and `\r` bytes `bytes` holds.
    private static func breakBytes(in bytes: UnsafeBufferPointer<UInt8>) -> (lineFeeds: Int, carriageReturns: Int) {
        typealias Lanes = SIMD32<UInt8>
        let (feed, carriage) = (Lanes(repeating: lineFeed), Lanes(repeating: carriageReturn))
        var (feeds, carriages) = (0, 0)
        var index = 0
        let start = UnsafeRawPointer(bytes.baseAddress!)
        while index + Lanes.scalarCount <= bytes.count {
            // A lane that matches is all ones: subtracting it adds one, for up to 255 rounds.
            var (feedLanes, carriageLanes) = (Lanes(), Lanes())
            var rounds = 0
            while rounds < 255, index + Lanes.scalarCount <= bytes.count {
                let chunk = start.loadUnaligned(fromByteOffset: index, as: Lanes.self)
                feedLanes &-= unsafeBitCast(chunk .== feed, to: Lanes.self)
                carriageLanes &-= unsafeBitCast(chunk .== carriage, to: Lanes.self)
                index += Lanes.scalarCount
                rounds += 1
            }
            for lane in 0..<Lanes.scalarCount {
                feeds += Int(feedLanes[lane])
                carriages += Int(carriageLanes[lane])
            }
        }
        for byte in bytes[index...] {
            if byte == lineFeed { feeds += 1 } else if byte == carriageReturn { carriages += 1 }
        }
        return (feeds, carriages)
    }

    /// The summary of `left` followed by `right`.
    static func + (left: TextSummary, right: TextSummary) -> TextSummary {
        guard left.count > 0 else { return right }
        guard right.count > 0 else { return left }
        var sum = TextSummary()
        sum.count = left.count + right.count
        sum.lineFeeds = left.lineFeeds + right.lineFeeds
        sum.carriageReturns = left.carriageReturns + right.carriageReturns
        sum.pairs = left.pairs + right.pairs + (left.endsWithCarriageReturn && right.startsWithLineFeed ? 1 : 0)
        sum.startsWithLineFeed = left.startsWithLineFeed
        sum.endsWithCarriageReturn = right.endsWithCarriageReturn
        return sum
    }
}
