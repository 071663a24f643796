import Foundation

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
        let editedBase = isDirty ? nil : base.map {
            EditedBase(file: context.absolute(path), device: $0.fingerprint.device, inode: $0.fingerprint.inode)
        }
        let splices: [ByteSplice]
        do throws(TextEditError) { splices = try RangedEdit.place(edits, in: text, encoding: encoding) } catch {
            throw .invalidEdit(path: path, error)
        }
        let edited = text.applying(splices)
        let limit = context.configuration.limits.maxFileBytes
        guard edited.count <= limit else { throw .tooLarge(path: path, size: edited.count, limit: limit) }
        accept(edited, changeID: changeID)
        // The journal may keep just the splices, when it holds the revision they were made on or
        // can pin the file they were made on.
        var record = journalRecord(changeID: changeID)
        record.splices = splices
        record.editedBase = editedBase
        return Accepted(revision: revision, record: record)
    }
}
