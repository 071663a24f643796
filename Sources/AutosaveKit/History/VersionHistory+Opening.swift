import AutosaveHistory
import FoundationEssentials
import Glibc
import Logging

extension VersionHistory {
    /// The database's name in the state directory.
    static let fileName = "history.sqlite"

    /// The history of `configuration`'s root, or nil when `history.enabled` is false. Nothing is
    /// opened yet: `run()` opens the database in the background (`openDatabase()`), and what is
    /// handed over before waits in the queue.
    static func make(
        _ configuration: ResolvedConfiguration, writers: EditWriters, logger: Logger, now: @escaping @Sendable () -> Int64 = VersionHistory.wallClock
    ) -> VersionHistory? {
        let settings = configuration.configuration.history
        guard settings.enabled else { return nil }
        let resolver = PathResolver(root: configuration.root, stateDirectory: configuration.stateDirectoryInsideRoot)
        return VersionHistory(
            database: HistoryDatabase(path: configuration.stateDirectory + "/" + fileName),
            files: HistoryFiles(resolver: resolver, maxFileBytes: settings.maxFileBytes, maxBinaryBytes: settings.maxBinaryBytes), writers: writers, logger: logger, now: now)
    }

    /// Opens the database, checked (`PRAGMA quick_check` reads every page: seconds on a large one
    /// not in the page cache, which is why this is not done before `ready`).
    ///
    /// A damaged database (truncated, garbage, failing its check) never stops the agent: it is
    /// kept aside as `history.sqlite.corrupt-<time>` (logged `history-corrupt`), and a new one
    /// starts. One that cannot be opened at all is logged (`history-failed`); the agent then runs
    /// without history, and queries answer that history is off.
    func openDatabase() async {
        guard !database.isOpen else { return }
        let path = database.path
        let stateDirectory = Self.folder(of: path)
        let now = self.now
        let database = self.database
        // The store is made and handed to the database on the blocking thread: it is not Sendable.
        let opened = await BlockingIO.run { () -> Result<String?, HistoryError> in
            // Made here when nothing else made it yet (the journal off): only the user may enter it.
            if mkdir(stateDirectory, 0o700) != 0, Glibc.errno != EEXIST {
                return .failure(.system(path: stateDirectory, operation: "mkdir", errno: Glibc.errno))
            }
            do throws(HistoryError) {
                database.install(try VersionStore(path: path))
                return .success(nil)
            } catch .corrupt {
                let keptAs = path + ".corrupt-\(now())"
                // Links among them are removed as links: nothing they lead to is touched.
                for suffix in ["-wal", "-shm", "-journal"] { unlink(path + suffix) }
                guard rename(path, keptAs) == 0 || Glibc.errno == ENOENT else {
                    return .failure(.system(path: path, operation: "rename aside", errno: Glibc.errno))
                }
                do throws(HistoryError) {
                    database.install(try VersionStore(path: path))
                    return .success(keptAs)
                } catch {
                    return .failure(error)
                }
            } catch {
                return .failure(error)
            }
        }
        switch opened {
        case .success(let keptAs):
            if let keptAs {
                logger.error(
                    "history-corrupt",
                    metadata: [
                        "path": "\(path)", "keptAs": "\(keptAs)",
                        "next": "started a new history; the damaged one is kept aside, the files and the unsaved edits are untouched",
                    ])
            }
        case .failure(let error):
            database.markUnavailable("it could not be opened: \(error)")
            logger.error(
                "history-failed",
                metadata: ["path": "\(path)", "error": "\(error)", "next": "the agent runs without history until it is started again"])
        }
    }

    /// The folder holding `path`.
    private static func folder(of path: String) -> String {
        guard let slash = path.utf8.lastIndex(of: UInt8(ascii: "/")) else { return "." }
        return String(path[..<slash])
    }

    /// Milliseconds since the Unix epoch, from the system's wall clock.
    @Sendable public static func wallClock() -> Int64 {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return Int64(spec.tv_sec) * 1000 + Int64(spec.tv_nsec) / 1_000_000
    }
}
