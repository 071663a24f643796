/// What a buffer does about its file changing on disk: a pure decision over three versions.
///
/// `nil` stands for "no file": a base of nil means the buffer's file did not exist when last
/// seen, a content of nil is a pending delete, a disk of nil means the file is gone now.
enum Reconciliation: Equatable {
    /// Why two versions could not be merged into one.
    enum ConflictCause: String, Equatable, Sendable {
        /// The edits touch the same lines (or merging is off).
        case overlap
        /// One side is binary: lines mean nothing there, so nothing is merged.
        case binary
    }

    /// The disk holds the base or the buffer's own content: adopt its fingerprint, nothing else.
    case unchanged
    /// The buffer is clean: take the disk version.
    case reload
    /// The buffer is dirty and the edits do not overlap: take the merge, stay dirty.
    case merge([UInt8])
    /// The edits overlap, a side is binary, or merging is off: one side keeps the path, the
    /// other is copied aside.
    case conflict(ConflictCause)
    /// The file was removed under unsaved edits: write it again from the buffer.
    case recreate
    /// The file of a clean buffer was removed: the buffer closes.
    case close

    static func decide(base: [UInt8]?, content: [UInt8]?, disk: [UInt8]?, mergeEnabled: Bool) -> Reconciliation {
        if disk == base || disk == content { return .unchanged }
        let isDirty = content != base
        guard let disk else { return isDirty ? .recreate : .close }
        guard isDirty, let content else {
            // Clean, or a pending delete overtaken by a newer write: the newer write wins.
            return .reload
        }
        guard mergeEnabled else { return .conflict(.overlap) }
        if [base ?? [], content, disk].contains(where: isBinary) { return .conflict(.binary) }
        switch LineMerge.merge(base: base ?? [], ours: content, theirs: disk) {
        case .merged(let merged): return merged == disk ? .reload : .merge(merged)
        case .conflict: return .conflict(.overlap)
        }
    }

    /// How many leading bytes are looked at for a NUL: 8 KiB, a little more than git's 8000, which it covers.
    static let binaryProbeLength = 8192

    /// Whether `bytes` looks binary as git judges it: a NUL byte among its first 8 KiB.
    static func isBinary(_ bytes: [UInt8]) -> Bool {
        bytes.prefix(binaryProbeLength).contains(0)
    }
}
