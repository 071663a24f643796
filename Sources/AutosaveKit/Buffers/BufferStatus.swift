/// A buffer as `status` shows it.
public struct BufferStatus: Sendable, Equatable {
    public var path: String
    public var revision: Int
    public var isDirty: Bool
    public var isLoading: Bool
    public var isSaving: Bool
    /// Milliseconds until the next autosave, when one is due.
    public var pendingSaveInMilliseconds: Int?
    /// Bytes in the buffer; nil when the buffer deletes its file.
    public var bytes: Int?

    public init(
        path: String, revision: Int, isDirty: Bool, isLoading: Bool = false, isSaving: Bool, pendingSaveInMilliseconds: Int?, bytes: Int?
    ) {
        self.path = path
        self.revision = revision
        self.isDirty = isDirty
        self.isLoading = isLoading
        self.isSaving = isSaving
        self.pendingSaveInMilliseconds = pendingSaveInMilliseconds
        self.bytes = bytes
    }
}

extension FileBuffer {
    /// The buffer's state as `status` reports it.
    var status: BufferStatus {
        let wait = pendingSave.map { context.clock.now.duration(to: $0) }
        return BufferStatus(
            path: path, revision: revision, isDirty: isDirty, isLoading: isLoading, isSaving: isSaving,
            pendingSaveInMilliseconds: wait.map { max(0, Int($0.wholeMilliseconds)) },
            bytes: text?.count)
    }
}
