import CInotifyTools
import Glibc
import SystemPackage

/// A raw inotify event, copied out of libinotifytools' static buffer.
struct RawInotifyEvent {
    var wd: Int32
    var mask: UInt32
    var cookie: UInt32
    var name: String

    func has(_ flag: Int32) -> Bool { mask & UInt32(bitPattern: flag) != 0 }
    var isOverflow: Bool { has(IN_Q_OVERFLOW) }
    var isDirectory: Bool { has(IN_ISDIR) }
}

/// The process's one inotify instance, reached through libinotifytools.
///
/// The library's state is process-global and unsynchronised, so only the watcher thread may
/// create and use this type; this file is the only one that calls the library. Watches are added
/// and removed on the instance's descriptor directly: the library's own path map goes wrong after
/// directory renames and deletes, and we keep our own tree
/// (https://github.com/inotify-tools/inotify-tools/issues/130,
/// https://github.com/inotify-tools/inotify-tools/issues/197).
final class InotifyInstance {
    /// The kernel descriptor behind the library, found right after initialisation.
    let descriptor: CInt

    /// The descriptor in the form other threads may hold.
    var shared: InotifyDescriptor { InotifyDescriptor(rawValue: descriptor) }

    /// Initialises libinotifytools and marks its descriptor close-on-exec.
    ///
    /// - Throws: `InotifyError.initializationFailed` (`EMFILE` at `max_user_instances`).
    init() throws(InotifyError) {
        let before = Self.inotifyDescriptors()
        guard inotifytools_initialize() != 0 else {
            throw .initializationFailed(Errno(rawValue: inotifytools_error()))
        }
        guard let found = Self.inotifyDescriptors().subtracting(before).max() else {
            inotifytools_cleanup()
            throw .initializationFailed(.noSuchFileOrDirectory)
        }
        descriptor = found
        // The library leaves it inheritable; a spawned editor or git must not keep it open.
        _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC)
    }

    deinit {
        inotifytools_cleanup()
    }

    /// Watches one directory (never following a symlink) and returns its watch descriptor.
    ///
    /// The kernel returns the same descriptor for a directory that is already watched.
    /// - Throws: `Errno` from `inotify_add_watch` (`ENOSPC` at the watch limit).
    func addWatch(absolutePath: String) throws(Errno) -> Int32 {
        try shared.addTreeWatch(absolutePath: absolutePath)
    }

    /// Removes a watch; a descriptor the kernel already dropped is not an error.
    func removeWatch(_ wd: Int32) {
        _ = inotify_rm_watch(descriptor, wd)
    }

    /// Blocks until the next event and returns a copy of it.
    ///
    /// - Throws: `InotifyError.readFailed` when `select` or `read` fails other than by `EINTR`.
    func nextEvent() throws(InotifyError) -> RawInotifyEvent {
        while true {
            if let event = inotifytools_next_event(-1) {
                let name = String(cString: CInotifyTools_eventName(event))
                return RawInotifyEvent(wd: event.pointee.wd, mask: event.pointee.mask, cookie: event.pointee.cookie, name: name)
            }
            let code = inotifytools_error()
            if code != 0 && code != EINTR { throw .readFailed(Errno(rawValue: code)) }
        }
    }

    /// Whether the kernel queue is empty right now (events the library already read are not counted).
    var isKernelQueueEmpty: Bool {
        var pending: CInt = 0
        return ioctl(descriptor, UInt(FIONREAD), &pending) == 0 && pending == 0
    }

    /// The descriptors of this process that are inotify instances.
    private static func inotifyDescriptors() -> Set<CInt> {
        var found = Set<CInt>()
        guard let directory = opendir("/proc/self/fd") else { return found }
        defer { closedir(directory) }
        var target = [UInt8](repeating: 0, count: 64)
        while let entry = readdir(directory) {
            let name = String(cString: CInotifyTools_direntName(entry))
            guard let fd = CInt(name) else { continue }
            let length = readlink("/proc/self/fd/\(name)", &target, target.count)
            guard length > 0 else { continue }
            if String(decoding: target[..<length], as: UTF8.self) == "anon_inode:inotify" { found.insert(fd) }
        }
        return found
    }
}

/// The instance's kernel descriptor, for the one call other threads may make on it: watching a
/// new cookie directory, which has to happen before the watcher thread can be woken through it.
struct InotifyDescriptor: Sendable {
    let rawValue: CInt

    /// Watches one directory of the tree for every event the agent handles; safe from any thread
    /// (the kernel serialises watches on one instance), so a scan may watch in parallel.
    ///
    /// - Throws: `Errno` from `inotify_add_watch` (`ENOSPC` at the watch limit).
    func addTreeWatch(absolutePath: String) throws(Errno) -> Int32 {
        let watch: Result<Int32, Errno> = absolutePath.withCString { path in
            Result { () throws(Errno) in try addTreeWatch(absolutePath: path) }
        }
        return try watch.get()
    }

    /// `addTreeWatch(absolutePath:)` for a path already a C string.
    /// - Throws: `Errno` from `inotify_add_watch` (`ENOSPC` at the watch limit).
    func addTreeWatch(absolutePath: UnsafePointer<CChar>) throws(Errno) -> Int32 {
        let wd = inotify_add_watch(rawValue, absolutePath, CInotifyTools_agentEventMask())
        guard wd >= 0 else { throw Errno(rawValue: errno) }
        return wd
    }

    /// - Throws: `Errno` from `inotify_add_watch`.
    func addCookieWatch(absolutePath: String) throws(Errno) -> Int32 {
        let wd = inotify_add_watch(rawValue, absolutePath, UInt32(IN_CREATE) | UInt32(IN_DELETE_SELF) | UInt32(IN_MOVE_SELF) | UInt32(IN_ONLYDIR))
        guard wd >= 0 else { throw Errno(rawValue: errno) }
        return wd
    }
}
