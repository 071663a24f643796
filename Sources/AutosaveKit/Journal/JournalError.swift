import FoundationEssentials
import Glibc
import SystemPackage

/// Why the journal cannot be used. The agent refuses to start rather than lose or overwrite it.
public enum JournalError: Error, Equatable, Sendable, CustomStringConvertible {
    /// Written by a newer agent; nothing was changed.
    case futureVersion(path: String, found: UInt32, supported: UInt32)
    /// The file is not a journal at all; nothing was changed.
    case notAJournal(path: String)
    /// A system call failed.
    case system(path: String, operation: String, Errno)

    public var description: String {
        switch self {
        case .futureVersion(let path, let found, let supported):
            "\(path) was written by a newer autosave (journal format \(found), this one reads \(supported)); "
                + "it was left untouched — run the newer version, or move the file away to start without it"
        case .notAJournal(let path):
            "\(path) is not an autosave journal; it was left untouched — move it away to start"
        case .system(let path, let operation, let errno): "\(operation) \(path): \(errno.description)"
        }
    }
}
