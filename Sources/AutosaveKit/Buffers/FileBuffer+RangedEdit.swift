import FoundationEssentials

extension FileBuffer {
    /// Applies ranged edits to the content, all or none, as one revision. The same `changeID`
    /// applied twice is applied once.
    ///
    /// - Returns: the revision the edits produced (or produced the first time).
    /// - Throws: `WorkspaceError.staleRevision` when `ifRevision` is not the current revision,
    ///   `.invalidEdit` when an edit cannot be placed (nothing applied), `.tooLarge` over
    ///   `limits.maxFileBytes`.
    func edit(_ edits: [TextEdit], encoding: PositionEncoding, changeID: UUID?, ifRevision: Int?) throws(WorkspaceError) -> Accepted {
        if let done = try earlierApplication(of: changeID, ifRevision: ifRevision) { return done }
        guard let text else { throw .invalidEdit(path: path, .noText) }
        let splices: [ByteSplice]
        do throws(TextEditError) { splices = try RangedEdit.place(edits, in: text, encoding: encoding) } catch {
            throw .invalidEdit(path: path, error)
        }
        return try accept(splices, of: text, changeID: changeID)
    }

    /// Applies byte splices of the current text (in text order, not overlapping, within it) as
    /// one revision: a patch's hunks once placed.
    ///
    /// - Throws: `WorkspaceError.staleRevision` when `ifRevision` is not the current revision,
    ///   `.invalidEdit` when the buffer deletes its file, `.tooLarge` over `limits.maxFileBytes`.
    func splice(_ splices: [ByteSplice], ifRevision: Int?) throws(WorkspaceError) -> Accepted {
        _ = try earlierApplication(of: nil, ifRevision: ifRevision)
        guard let text else { throw .invalidEdit(path: path, .noText) }
        return try accept(splices, of: text, changeID: nil)
    }

    private func accept(_ splices: [ByteSplice], of text: TextRope, changeID: UUID?) throws(WorkspaceError) -> Accepted {
        // A clean buffer's text is the bytes it read: the journal may keep a copy of them (not of
        // the file, which a tool may write in place meanwhile) and just the splices.
        let editedBase = isDirty ? nil : base.map { EditedBase(bytes: $0.bytes) }
        let edited = text.applying(splices)
        let limit = context.configuration.limits.maxFileBytes
        guard edited.count <= limit else { throw .tooLarge(path: path, size: edited.count, limit: limit) }
        accept(edited, changeID: changeID)
        // The journal may keep just the splices, when it holds the revision they were made on or
        // can pin a copy of the version they were made on.
        var record = journalRecord(changeID: changeID)
        record.splices = splices
        record.editedBase = editedBase
        return Accepted(revision: revision, record: record)
    }
}
