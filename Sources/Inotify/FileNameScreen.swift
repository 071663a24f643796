/// The file names an ignore rule could apply to, judged by their first and last bytes alone.
///
/// A scan meets every file of the tree, and most ignore patterns say how a name they match
/// begins or ends (`*.swp`, `.#*`, `4913`). A name whose first and last bytes no pattern allows is
/// not ignored, so the scan keeps it without asking the rule or making a `String` of it: on a
/// million files that is most of what a listing costs in user space.
///
/// Guarantees: `mayApply(first:last:)` is true for every pair that some `admit` call allowed;
/// a screen that was never told of a pattern passes every name as not ignored.
public struct FileNameScreen: Sendable, Equatable {
    /// One bit per (first byte, last byte) pair: 65,536 bits.
    private var bits = [UInt64](repeating: 0, count: 1024)

    /// A screen before any pattern: it lets every name through as not ignored.
    public init() {}

    /// Notes a pattern that applies only to names starting with `first` (any start when nil)
    /// and ending with `last` (any end when nil).
    public mutating func admit(first: UInt8?, last: UInt8?) {
        let firsts = first.map { Int($0)...Int($0) } ?? 0...255
        let lasts = last.map { Int($0)...Int($0) } ?? 0...255
        for first in firsts {
            for last in lasts { bits[(first << 8 | last) >> 6] |= 1 << UInt64(last & 63) }
        }
    }

    /// Whether a rule may apply to a name starting with `first` and ending with `last`; when
    /// false, it certainly does not.
    public func mayApply(first: UInt8, last: UInt8) -> Bool {
        let pair = Int(first) << 8 | Int(last)
        return bits[pair >> 6] & (1 << UInt64(pair & 63)) != 0
    }

    /// Whether a rule may apply to the file named by `name`'s bytes (not empty).
    func mayApply(toFile name: UnsafeBufferPointer<UInt8>) -> Bool {
        mayApply(first: name[0], last: name[name.count - 1])
    }
}
