import Glibc

/// The inotify limits in force, read from `/proc/sys/fs/inotify`.
///
/// libinotifytools' own getter for the queue size reads a misspelled path and always returns -1
/// (https://github.com/inotify-tools/inotify-tools/issues/240), so these are read directly.
public enum KernelLimits {
    /// Events the kernel queues per instance before it reports `IN_Q_OVERFLOW`.
    public static var maxQueuedEvents: Int? { readNumber("/proc/sys/fs/inotify/max_queued_events") }

    /// Watches one user may hold across all instances: the lower of the global limit and the
    /// user namespace's own (`/proc/sys/user/max_inotify_watches`), which is what the kernel enforces.
    public static var maxUserWatches: Int? { watchLimit?.value }

    /// The sysctl that sets the watch limit in force, and its value.
    public static var watchLimit: (sysctl: String, value: Int)? {
        let global = readNumber("/proc/sys/fs/inotify/max_user_watches").map { ("fs.inotify.max_user_watches", $0) }
        let namespace = readNumber("/proc/sys/user/max_inotify_watches").map { ("user.max_inotify_watches", $0) }
        switch (global, namespace) {
        case let (global?, namespace?): return namespace.1 < global.1 ? namespace : global
        case let (global?, nil): return global
        case let (nil, namespace?): return namespace
        case (nil, nil): return nil
        }
    }

    /// The command that raises the watch limit in force to `value`.
    public static func raiseWatchLimitCommand(to value: Int) -> String {
        "sysctl -w \(watchLimit?.sysctl ?? "fs.inotify.max_user_watches")=\(value)"
    }

    static func readNumber(_ path: String) -> Int? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 32)
        let count = read(fd, &buffer, buffer.count)
        guard count > 0 else { return nil }
        let digits = buffer[..<count].prefix { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }
        return Int(String(decoding: digits, as: UTF8.self))
    }
}
