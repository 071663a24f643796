import Glibc

/// The inotify limits in force, read from `/proc/sys/fs/inotify`.
///
/// libinotifytools' own getter for the queue size reads a misspelled path and always returns -1
/// (inotify-tools issue 240), so these are read directly.
public enum KernelLimits {
    /// Events the kernel queues per instance before it reports `IN_Q_OVERFLOW`.
    public static var maxQueuedEvents: Int? { readNumber("/proc/sys/fs/inotify/max_queued_events") }

    /// Watches one user may hold across all instances.
    public static var maxUserWatches: Int? { readNumber("/proc/sys/fs/inotify/max_user_watches") }

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
