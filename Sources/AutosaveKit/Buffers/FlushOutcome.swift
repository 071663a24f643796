import ByteNames

/// What a flush of every dirty buffer achieved (at `stop`, or at shutdown).
public struct FlushOutcome: Sendable, Equatable {
    /// Buffers saved at their paths.
    public var saved = 0
    /// Buffers that could not be saved at their paths; their edits are in conflict copies.
    public var copied: [Copied] = []
    /// Paths whose unsaved edits are on disk nowhere (neither saved nor copied aside): they are
    /// in the journal only, if it is on. The agent exits with status 1 after such a flush.
    public var lost: [String] = []

    /// An edit kept as a conflict copy because its own path could not take it.
    public struct Copied: Sendable, Equatable {
        public var path: String
        public var copy: String

        public init(path: String, copy: String) {
            self.path = path
            self.copy = copy
        }
    }

    public init() {}

    /// Buffers that could not be saved at their paths, copied aside or not.
    public var failed: Int { copied.count + lost.count }

    /// This flush, then `later`: saves add up, a copy is listed once (the latest for its path),
    /// and what is lost is what the later flush, which tried again, could not land.
    public func followed(by later: FlushOutcome) -> FlushOutcome {
        var combined = FlushOutcome()
        combined.saved = saved + later.saved
        combined.copied = copied.filter { earlier in !later.copied.contains { $0.path.isSameName(as: earlier.path) } } + later.copied
        combined.lost = later.lost
        return combined
    }
}
