import CAutosaveShims
import Foundation
import Glibc
import Synchronization

/// A child process started with `posix_spawn`, for the end-to-end tests.
///
/// Foundation's `Process.run()` on Linux reads `/proc/self/fd` with a 256-byte copy of each
/// `dirent` (swift-corelibs-foundation#5472, fixed after Swift 6.3.1): when a record ends a page,
/// the copy reads past it and the test binary dies with SIGSEGV. It did here, about one full run
/// in three once the history database added descriptors. This spawns without reading that folder:
/// the child closes every descriptor above 2 (`addclosefrom_np`) before it runs.
final class SpawnedProcess: Sendable {
    let processIdentifier: pid_t
    /// The exit status once reaped (the signal's number for a process a signal ended, as
    /// Foundation's `terminationStatus` gives).
    private let reaped = Mutex<Int32?>(nil)

    /// Starts `executable arguments…` in `directory`, standard input from /dev/null, standard
    /// output and error into `output` and `errors` (write ends the parent then closes).
    init(executable: String, arguments: [String], directory: String?, output: CInt, errors: CInt) throws {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, output, 1)
        posix_spawn_file_actions_adddup2(&actions, errors, 2)
        if let directory { CAutosaveShims_spawnActionsChangeDirectory(&actions, directory) }
        CAutosaveShims_spawnActionsCloseFrom(&actions, 3)
        let argv: [UnsafeMutablePointer<CChar>?] = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var pid = pid_t()
        let result = posix_spawn(&pid, executable, &actions, nil, argv, environ)
        guard result == 0 else { throw POSIXError(POSIXErrorCode(rawValue: result) ?? .EIO) }
        processIdentifier = pid
    }

    /// Whether it has not been reaped yet (it may have exited and wait as a zombie).
    var isRunning: Bool { reaped.withLock { $0 == nil } }

    /// Waits for it to exit (blocking the calling thread) and returns its status.
    func waitUntilExit() -> Int32 {
        if let status = reaped.withLock({ $0 }) { return status }
        var status: Int32 = 0
        while waitpid(processIdentifier, &status, 0) < 0 {
            guard errno == EINTR else { return reaped.withLock { $0 } ?? -1 }
        }
        // WIFEXITED / WEXITSTATUS / WTERMSIG, which Swift does not import as macros.
        let signal = status & 0x7F
        let code = signal == 0 ? (status >> 8) & 0xFF : signal
        reaped.withLock { $0 = code }
        return code
    }
}
