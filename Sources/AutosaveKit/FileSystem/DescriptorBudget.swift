import Glibc

/// How the agent shares the file descriptors its limit (`ulimit -n`) allows, so that it never
/// uses them all.
///
/// Running out is not merely an error here: libdispatch, under every Swift task, reads
/// `/proc/<tid>/stat` once a second while work waits for a thread, and traps (SIGILL) when that
/// `open` fails. So the agent must keep descriptors free: clients, the one use that grows without
/// bound, get a quarter of those free when it starts; blocking calls (a save holds up to four:
/// its folder, the file, its temp file, a link on the way) another quarter; the rest is left to
/// scans, the watcher, SwiftNIO and the runtime.
public struct DescriptorBudget: Sendable, Equatable {
    /// Descriptors the process may have open at once (the soft `RLIMIT_NOFILE`).
    public let limit: Int
    /// Descriptors open when the budget was measured.
    public let inUse: Int

    /// A budget for `limit` descriptors of which `inUse` are taken.
    public init(limit: Int, inUse: Int) {
        self.limit = limit
        self.inUse = inUse
    }

    /// Descriptors still free when the budget was measured.
    public var free: Int { max(0, limit - inUse) }

    /// Clients served at once; one more is told the agent is full and closed (at least 1).
    public var clients: Int { max(1, free / 4) }

    /// Blocking calls run at once, from 1 to 64 (as many as the final flush runs saves at once).
    public var blockingCalls: Int { min(64, max(1, free / 16)) }

    /// The process's limit and the descriptors it has open now (counted in `/proc/self/fd`; a
    /// process without `/proc` is taken to hold 32).
    public static func measure() -> DescriptorBudget {
        DescriptorBudget(limit: currentLimit(), inUse: openDescriptors() ?? 32)
    }

    /// The soft `RLIMIT_NOFILE` now (`prlimit` can change it under a running process).
    public static func currentLimit() -> Int {
        var limits = rlimit()
        return getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limits) == 0 ? Int(clamping: limits.rlim_cur) : 1024
    }

    /// Descriptors open in this process, not counting the one that lists them.
    static func openDescriptors() -> Int? {
        guard let folder = opendir("/proc/self/fd") else { return nil }
        defer { closedir(folder) }
        var count = 0
        while let entry = readdir(folder) {
            if entry.pointee.d_name.0 != CChar(UInt8(ascii: ".")) { count += 1 }
        }
        return count - 1
    }
}
