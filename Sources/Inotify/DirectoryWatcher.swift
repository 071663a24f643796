import ByteNames
import Dispatch
import Glibc
import Synchronization
import SystemPackage

/// Watches one directory tree recursively and reports kernel events with paths relative to it.
///
/// Every watcher in the process shares one inotify instance and one dedicated thread, because
/// libinotifytools keeps process-global state. Only directories are watched; a directory that
/// appears is watched first and listed second, so nothing created inside it is missed.
///
/// ```swift
/// let watcher = DirectoryWatcher(root: "/srv/project") { _, _, _ in false }
/// let scan = try await watcher.start()
/// for await event in watcher.events { … }
/// ```
public final class DirectoryWatcher: Sendable {
    /// The absolute path of the watched root.
    public let root: String
    /// Raw events in kernel order. Finishes after `stop()`; empty when the watcher was made
    /// with a sink of the caller's own.
    public let events: AsyncStream<WatchEvent>

    let mailbox: Mailbox
    /// The shared inotify instance, once started.
    private let kernel = Mutex<InotifyDescriptor?>(nil)

    /// Prepares a watcher; nothing is watched until `start()`.
    ///
    /// - Parameters:
    ///   - root: the absolute path of the directory to watch.
    ///   - cookieDirectory: a private directory (created if missing, mode 0700) where the cookies
    ///     that wake the watcher thread are created; it is never watched as part of the tree. By
    ///     default a fresh one outside the tree (under `$XDG_RUNTIME_DIR` or `/tmp`), so that
    ///     renaming or deleting the tree, or a folder in it, never cuts the watcher off.
    ///   - ownDirectory: the caller's own directory inside the tree (ignored by `isIgnored`);
    ///     its deletion or renaming away is reported as `controlDirectoryLost`.
    ///   - isIgnored: decides, for a name in a directory (relative path, `""` for the root),
    ///     whether it is reported and, for a directory, whether it is watched at all. Called on the
    ///     watcher thread for every entry of every scan; keep it fast.
    ///   - ignoreScreen: the file names `isIgnored` may say yes to, by their first and last
    ///     bytes; a scan keeps every other file without asking it. Nil asks for every name.
    ///   - isLeftover: marks ignored files worth reporting from the first walk (the agent's own
    ///     temp files, left by a crash); they come back in `DirectoryScan.leftovers`.
    ///   - privateMarker: a file name that marks a directory as another program's private
    ///     directory (another agent's state directory, by its lock file): a directory holding it
    ///     is neither watched nor listed, and one in which it appears is dropped (`directoryIgnored`).
    public convenience init(
        root: String, cookieDirectory: String? = nil, ownDirectory: String? = nil,
        isIgnored: @escaping @Sendable (_ directory: String, _ name: String, _ isDirectory: Bool) -> Bool,
        ignoreScreen: FileNameScreen? = nil,
        isLeftover: @escaping @Sendable (_ name: String) -> Bool = { _ in false }, privateMarker: String? = nil
    ) {
        let (stream, continuation) = AsyncStream.makeStream(of: WatchEvent.self, bufferingPolicy: .unbounded)
        self.init(
            root: root, cookieDirectory: cookieDirectory, ownDirectory: ownDirectory, isIgnored: isIgnored,
            ignoreScreen: ignoreScreen, isLeftover: isLeftover, privateMarker: privateMarker, events: stream, sink: WatchEventSink(continuation))
    }

    /// Prepares a watcher whose events go to `sink` instead of `events`.
    ///
    /// The other parameters are those of
    /// `init(root:cookieDirectory:ownDirectory:isIgnored:ignoreScreen:isLeftover:privateMarker:)`.
    public convenience init(
        root: String, cookieDirectory: String? = nil, ownDirectory: String? = nil,
        isIgnored: @escaping @Sendable (_ directory: String, _ name: String, _ isDirectory: Bool) -> Bool,
        ignoreScreen: FileNameScreen? = nil,
        isLeftover: @escaping @Sendable (_ name: String) -> Bool = { _ in false }, privateMarker: String? = nil,
        sink: WatchEventSink
    ) {
        let (empty, continuation) = AsyncStream.makeStream(of: WatchEvent.self)
        continuation.finish()
        self.init(
            root: root, cookieDirectory: cookieDirectory, ownDirectory: ownDirectory, isIgnored: isIgnored,
            ignoreScreen: ignoreScreen, isLeftover: isLeftover, privateMarker: privateMarker, events: empty, sink: sink)
    }

    /// A watcher whose scans probe `probeBatch` directories at a time, for tests of the batching
    /// that need not make tens of thousands of directories; the rest as in
    /// `init(root:cookieDirectory:ownDirectory:isIgnored:ignoreScreen:isLeftover:privateMarker:)`.
    convenience init(
        root: String, cookieDirectory: String?,
        isIgnored: @escaping @Sendable (_ directory: String, _ name: String, _ isDirectory: Bool) -> Bool, probeBatch: Int
    ) {
        let (stream, continuation) = AsyncStream.makeStream(of: WatchEvent.self, bufferingPolicy: .unbounded)
        self.init(
            root: root, cookieDirectory: cookieDirectory, ownDirectory: nil, isIgnored: isIgnored, ignoreScreen: nil,
            isLeftover: { _ in false }, privateMarker: nil, events: stream, sink: WatchEventSink(continuation), probeBatch: probeBatch)
    }

    private init(
        root: String, cookieDirectory: String?, ownDirectory: String?,
        isIgnored: @escaping @Sendable (String, String, Bool) -> Bool, ignoreScreen: FileNameScreen?,
        isLeftover: @escaping @Sendable (String) -> Bool, privateMarker: String?, events: AsyncStream<WatchEvent>,
        sink: WatchEventSink, probeBatch: Int = TreeSession.probeBatch
    ) {
        self.root = root.utf8.count > 1 && root.utf8.last == UInt8(ascii: "/") ? String(decoding: root.utf8.dropLast(), as: UTF8.self) : root
        self.events = events
        self.mailbox = Mailbox(
            root: self.root, cookieDirectory: cookieDirectory ?? PrivateCookies.nextDirectory(),
            ownDirectory: ownDirectory, isIgnored: isIgnored, ignoreScreen: ignoreScreen, isLeftover: isLeftover,
            privateMarker: privateMarker, sink: sink, probeBatch: probeBatch)
    }

    /// Walks the tree, watching every directory that is not ignored, and returns what it found.
    ///
    /// - Throws: `InotifyError.rootUnavailable` when the root is missing or not a directory,
    ///   `.controlDirectoryFailed` when the cookie directory cannot be made, `.initializationFailed`.
    ///   Reaching the watch limit is not an error: it is reported as `WatchEvent.watchLimit`.
    public func start() async throws(InotifyError) -> DirectoryScan {
        do { try DirectoryListing.requireDirectory(root) } catch { throw .rootUnavailable(path: root, error) }
        try Self.makeDirectories(mailbox.cookieDirectory)
        let descriptor = try await WatcherThread.shared.descriptor()
        kernel.withLock { $0 = descriptor }
        let cookieWatch: Int32
        do { cookieWatch = try descriptor.addCookieWatch(absolutePath: mailbox.cookieDirectory) } catch {
            throw .controlDirectoryFailed(path: mailbox.cookieDirectory, error)
        }
        WatcherThread.shared.register(mailbox, cookieWatch: cookieWatch)
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<DirectoryScan, InotifyError>, Never>) in
            send(.start(continuation))
        }
        return try result.get()
    }

    /// Whether the kernel holds events not read yet (of any watcher in the process): a look at
    /// the disk now may see changes whose events are still to come.
    public var hasUnreadEvents: Bool {
        guard let descriptor = kernel.withLock({ $0 }) else { return false }
        var pending: CInt = 0
        return ioctl(descriptor.rawValue, UInt(FIONREAD), &pending) == 0 && pending > 0
    }

    /// Requests a barrier: `WatchEvent.barrier(n)` arrives on `events` after every event that
    /// happened before this call. Returns `n`.
    public func requestBarrier() -> UInt64 {
        let number = mailbox.nextBarrierNumber()
        send(.barrier(number))
        return number
    }

    /// Re-lists the directories that could not be watched (after the watch limit was hit), tries
    /// to watch them again, and reports a `rescanned` event. Nothing happens when all are watched.
    public func rescanUnwatched() {
        send(.rescanUnwatched)
    }

    /// Removes every watch of this tree and finishes `events`. Safe to call more than once.
    public func stop() async {
        guard mailbox.isRegistered else {
            mailbox.sink.finish()
            return
        }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            send(.stop(continuation))
        }
    }

    /// Fault injection for tests: the watcher thread stops reading the kernel queue until the
    /// returned gate is opened, so a test can overflow the queue on purpose.
    public func _stallReader() -> ReaderStall {
        let stall = ReaderStall()
        send(.stall(stall))
        return stall
    }

    private func send(_ command: WatcherCommand) {
        let sequence = mailbox.enqueue(command)
        // The cookie's creation event orders the command after every earlier event of the instance.
        let path = mailbox.cookieDirectory + "/c\(sequence)"
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
        if fd >= 0 { close(fd) }
    }

    static func makeDirectories(_ path: String) throws(InotifyError) {
        var partial = ""
        for component in path.pathComponents {
            partial += "/" + component
            if mkdir(partial, 0o700) != 0 && errno != EEXIST {
                throw .controlDirectoryFailed(path: path, Errno(rawValue: errno))
            }
        }
    }
}

/// A paused watcher thread, for fault-injection tests only.
public final class ReaderStall: Sendable {
    let stalled = DispatchSemaphore(value: 0)
    let released = DispatchSemaphore(value: 0)

    /// Blocks until the watcher thread has actually stopped reading.
    public func waitUntilStalled() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            DispatchQueue.global().async {
                self.stalled.wait()
                continuation.resume()
            }
        }
    }

    /// Lets the watcher thread read again.
    public func release() { released.signal() }
}

/// What a caller asks the watcher thread to do for one tree.
enum WatcherCommand: Sendable {
    case start(CheckedContinuation<Result<DirectoryScan, InotifyError>, Never>)
    case barrier(UInt64)
    case rescanUnwatched
    case stop(CheckedContinuation<Void, Never>)
    case stall(ReaderStall)
}

/// The commands waiting for one tree, shared between callers and the watcher thread.
final class Mailbox: Sendable {
    let root: String
    let cookieDirectory: String
    let ownDirectory: String?
    let isIgnored: @Sendable (String, String, Bool) -> Bool
    let isLeftover: @Sendable (String) -> Bool
    let privateMarker: String?
    /// The file names to ask `isIgnored` about (and to compare with the private marker); nil
    /// when every name must be asked about.
    let fileScreen: FileNameScreen?
    let sink: WatchEventSink
    /// Directories a scan probes at once (`TreeSession.probeBatch`, less in tests).
    let probeBatch: Int
    /// The cookie directory as a directory and a name relative to the root, when it is inside
    /// the tree: what `ignores` compares, so that it builds no path per directory it is asked about.
    private let cookieEntry: (directory: String, name: String)?

    private struct State {
        var nextSequence: UInt64 = 1
        var nextBarrier: UInt64 = 1
        var pending: [(sequence: UInt64, command: WatcherCommand)] = []
        var isRegistered = false
    }
    private let state = Mutex(State())

    init(
        root: String, cookieDirectory: String, ownDirectory: String?,
        isIgnored: @escaping @Sendable (String, String, Bool) -> Bool, ignoreScreen: FileNameScreen? = nil,
        isLeftover: @escaping @Sendable (String) -> Bool, privateMarker: String?, sink: WatchEventSink,
        probeBatch: Int = TreeSession.probeBatch
    ) {
        self.probeBatch = probeBatch
        var screen = ignoreScreen
        if let marker = privateMarker?.utf8, let first = marker.first, let last = marker.last {
            screen?.admit(first: first, last: last)
        }
        self.fileScreen = screen
        if let relative = cookieDirectory.pathBelow(root) {
            let (folder, name) = relative.folderAndName
            cookieEntry = (folder, name)
        } else {
            cookieEntry = nil
        }
        self.ownDirectory = ownDirectory
        self.isLeftover = isLeftover
        self.privateMarker = privateMarker
        self.root = root
        self.cookieDirectory = cookieDirectory
        self.isIgnored = isIgnored
        self.sink = sink
    }

    /// `relative` made absolute against the root.
    func absolutePath(_ relative: String) -> String {
        relative.isEmpty ? root : (root == "/" ? "/" + relative : root + "/" + relative)
    }

    /// Calls `body` with `relative` made absolute as a C string on the stack, which is valid only
    /// during the call.
    func withAbsolutePath<Result>(of relative: String, _ body: (UnsafePointer<CChar>) -> Result) -> Result {
        var root = root
        var relative = relative
        return root.withUTF8 { root in
            relative.withUTF8 { relative in
                let separator = relative.isEmpty || root.last == UInt8(ascii: "/") ? 0 : 1
                let length = root.count + separator + relative.count
                return withUnsafeTemporaryAllocation(of: CChar.self, capacity: length + 1) { path in
                    let bytes = UnsafeMutableRawBufferPointer(path)
                    bytes.copyMemory(from: UnsafeRawBufferPointer(root))
                    if separator == 1 { bytes[root.count] = UInt8(ascii: "/") }
                    UnsafeMutableRawBufferPointer(rebasing: bytes[(root.count + separator)...])
                        .copyMemory(from: UnsafeRawBufferPointer(relative))
                    bytes[length] = 0
                    return body(UnsafePointer(path.baseAddress!))
                }
            }
        }
    }

    /// Whether the tree leaves `name` in `directory` out: the rules say so, or it is the
    /// watcher's own cookie directory.
    func ignores(_ name: String, in directory: String, isDirectory: Bool) -> Bool {
        if isDirectory, let cookieEntry, name.isSameName(as: cookieEntry.name), directory.isSameName(as: cookieEntry.directory) { return true }
        return isIgnored(directory, name, isDirectory)
    }

    var isRegistered: Bool {
        get { state.withLock { $0.isRegistered } }
        set { state.withLock { $0.isRegistered = newValue } }
    }

    func nextBarrierNumber() -> UInt64 {
        state.withLock { state in
            defer { state.nextBarrier += 1 }
            return state.nextBarrier
        }
    }

    /// Queues a command and returns the sequence number its cookie must carry.
    func enqueue(_ command: WatcherCommand) -> UInt64 {
        state.withLock { state in
            let sequence = state.nextSequence
            state.nextSequence += 1
            state.pending.append((sequence, command))
            return sequence
        }
    }

    /// The sequence numbers of the commands still waiting for their cookies.
    var pendingSequences: [UInt64] {
        state.withLock { $0.pending.map(\.sequence) }
    }

    /// Takes the commands whose cookies were created no later than cookie `sequence`.
    func take(upTo sequence: UInt64) -> [(sequence: UInt64, command: WatcherCommand)] {
        state.withLock { state in
            let ready = state.pending.filter { $0.sequence <= sequence }
            state.pending.removeAll { $0.sequence <= sequence }
            return ready
        }
    }
}

/// Cookie directories outside every watched tree: one folder per process, made private by
/// `mkdtemp` under `$XDG_RUNTIME_DIR` (else `/tmp`), and one numbered subfolder per watcher.
enum PrivateCookies {
    /// The folder, the last number handed out, and how many watchers hold a number now.
    private static let state = Mutex<(base: String?, next: Int, live: Int)>((nil, 0, 0))

    /// A path for the next watcher's cookies (made by `start()`); the base folder is made once.
    static func nextDirectory() -> String {
        state.withLock { state in
            if state.base == nil {
                let runtime = getenv("XDG_RUNTIME_DIR").map { String(cString: $0) }
                let parent = runtime.flatMap { $0.isAbsolutePath && access($0, W_OK) == 0 ? $0 : nil } ?? "/tmp"
                removeLeftovers(in: parent)
                var template = Array((parent + "/autosave-cookies-\(getpid())-XXXXXX").utf8CString)
                state.base = template.withUnsafeMutableBufferPointer { buffer in
                    mkdtemp(buffer.baseAddress!).map { String(cString: $0) }
                } ?? parent + "/autosave-cookies-\(getpid())"
            }
            state.next += 1
            state.live += 1
            return state.base! + "/w\(state.next)"
        }
    }

    /// Folders of processes that died without stopping their watchers (`kill -9`): empty but
    /// for cookies never read, and named with their pid.
    private static func removeLeftovers(in parent: String) {
        guard let listing = try? DirectoryListing.entries(of: parent, statFiles: false) else { return }
        for entry in listing where entry.isDirectory && entry.name.hasBytePrefix("autosave-cookies-") {
            let fields = entry.name.dropFirst("autosave-cookies-".count).split(separator: "-")
            guard fields.count == 2, let pid = pid_t(fields[0]), kill(pid, 0) != 0, errno == ESRCH else { continue }
            let base = parent + "/" + entry.name
            guard DirectoryListing.owner(of: base) == getuid() else { continue }
            for watcher in (try? DirectoryListing.entries(of: base, statFiles: false)) ?? [] where watcher.isDirectory {
                for cookie in (try? DirectoryListing.entries(of: base + "/" + watcher.name, statFiles: false)) ?? [] {
                    unlink(base + "/" + watcher.name + "/" + cookie.name)
                }
                rmdir(base + "/" + watcher.name)
            }
            rmdir(base)
        }
    }

    /// Removes the per-process folder once its last watcher is gone.
    static func removeBaseIfEmpty(after directory: String) {
        state.withLock { state in
            guard let base = state.base, directory.pathBelow(base) != nil else { return }
            state.live -= 1
            guard state.live <= 0 else { return }
            if rmdir(base) == 0 || errno == ENOENT { state.base = nil }
        }
    }
}
