import AutosaveHistory
import FoundationEssentials
import Glibc
import Logging

extension VersionHistory {
    /// The database's name in the state directory.
    static let fileName = "history.sqlite"

    /// Opens the history of `configuration`'s root, or nil when `history.enabled` is false or no
    /// database can be had (logged: the agent runs on without history).
    ///
    /// A damaged database (truncated, garbage, failing its check) never stops the agent: it is
    /// kept aside as `history.sqlite.corrupt-<time>` (logged `history-corrupt`), and a new one starts.
    static func open(
        _ configuration: ResolvedConfiguration, writers: EditWriters, logger: Logger, now: @escaping @Sendable () -> Int64 = VersionHistory.wallClock
    ) async -> VersionHistory? {
        let settings = configuration.configuration.history
        guard settings.enabled else { return nil }
        let path = configuration.stateDirectory + "/" + fileName
        let stateDirectory = configuration.stateDirectory
        let opened = await BlockingIO.run { () -> Result<(HistoryDatabase, keptAs: String?), HistoryError> in
            // Made here when nothing else made it yet (the journal off): only the user may enter it.
            if mkdir(stateDirectory, 0o700) != 0, Glibc.errno != EEXIST {
                return .failure(.system(path: stateDirectory, operation: "mkdir", errno: Glibc.errno))
            }
            do throws(HistoryError) {
                return .success((HistoryDatabase(path: path, store: try VersionStore(path: path)), nil))
            } catch .corrupt {
                let keptAs = path + ".corrupt-\(now())"
                // Links among them are removed as links: nothing they lead to is touched.
                for suffix in ["-wal", "-shm", "-journal"] { unlink(path + suffix) }
                guard rename(path, keptAs) == 0 || Glibc.errno == ENOENT else {
                    return .failure(.system(path: path, operation: "rename aside", errno: Glibc.errno))
                }
                do throws(HistoryError) {
                    return .success((HistoryDatabase(path: path, store: try VersionStore(path: path)), keptAs))
                } catch {
                    return .failure(error)
                }
            } catch {
                return .failure(error)
            }
        }
        switch opened {
        case .success(let (database, keptAs)):
            if let keptAs {
                logger.error(
                    "history-corrupt",
                    metadata: [
                        "path": "\(path)", "keptAs": "\(keptAs)",
                        "next": "started a new history; the damaged one is kept aside, the files and the unsaved edits are untouched",
                    ])
            }
            let resolver = PathResolver(root: configuration.root, stateDirectory: configuration.stateDirectoryInsideRoot)
            return VersionHistory(
                database: database, files: HistoryFiles(resolver: resolver, maxFileBytes: settings.maxFileBytes), writers: writers,
                logger: logger, now: now)
        case .failure(let error):
            logger.error(
                "history-failed",
                metadata: ["path": "\(path)", "error": "\(error)", "next": "the agent runs without history until it is started again"])
            return nil
        }
    }

    /// Milliseconds since the Unix epoch, from the system's wall clock.
    @Sendable public static func wallClock() -> Int64 {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return Int64(spec.tv_sec) * 1000 + Int64(spec.tv_nsec) / 1_000_000
    }
}
