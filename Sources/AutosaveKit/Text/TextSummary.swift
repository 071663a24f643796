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

    /// Counts the breaks of `bytes` in one pass.
    init(_ bytes: UnsafeBufferPointer<UInt8>) {
        count = bytes.count
        guard let first = bytes.first, let last = bytes.last else { return }
        startsWithLineFeed = first == Self.lineFeed
        endsWithCarriageReturn = last == Self.carriageReturn
        var previousWasReturn = false
        for byte in bytes {
            if byte == Self.lineFeed {
                lineFeeds += 1
                if previousWasReturn { pairs += 1 }
                previousWasReturn = false
            } else {
                previousWasReturn = byte == Self.carriageReturn
                if previousWasReturn { carriageReturns += 1 }
            }
        }
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
