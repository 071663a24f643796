import Logging

/// An edit a buffer took, on its way to being durable in the journal.
///
/// The edit is in the buffer and written to the journal; it may be acknowledged to its client
/// only once `waitUntilDurable()` returned.
public struct AcceptedEdit: Sendable {
    /// The buffer's revision after the edit.
    public let revision: Int
    let ticket: Ticket?
    let logger: Logger

    /// Where in the journal the edit's record went.
    struct Ticket: Sendable {
        let journal: EditJournal
        let sequence: Int
        let path: String
    }

    /// Returns once the edit would survive a crash (at once without a journal, or with
    /// `journal.fsync` off).
    ///
    /// - Throws: `WorkspaceError.journalFailed` when the journal's fsync failed: the edit stays
    ///   in the buffer and is saved as usual, but the client must be told it is not safe yet.
    public func waitUntilDurable() async throws(WorkspaceError) {
        guard let ticket else { return }
        do { try await ticket.journal.waitUntilDurable(ticket.sequence) } catch {
            Self.logJournalFailure(error, path: ticket.path, logger: logger)
            throw .journalFailed(error)
        }
    }

    static func logJournalFailure(_ error: JournalError, path: String, logger: Logger) {
        logger.error(
            "journal-failed",
            metadata: [
                "path": "\(path)", "error": "\(error)",
                "next": "the edit is in the buffer and will be saved, but would not survive a crash; the client is told",
            ])
    }
}
