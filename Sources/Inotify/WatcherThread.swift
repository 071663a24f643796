import Dispatch
import Glibc
import Synchronization
import SystemPackage

/// The process's one watcher thread: it owns the inotify instance and every tree's state.
///
/// It starts with the first `DirectoryWatcher` and then lives as long as the process, blocked in
/// the kernel (no CPU) while nothing changes. Callers reach it only through mailboxes and
/// cookie files; everything below `run()` happens on this thread alone.
final class WatcherThread: Sendable {
    static let shared = WatcherThread()

    private enum Phase {
        case idle
        case starting([CheckedContinuation<Result<InotifyDescriptor, InotifyError>, Never>])
        case running(InotifyDescriptor)
        case failed(InotifyError)
    }

    private struct Shared {
        var phase = Phase.idle
        /// Mailboxes by the watch descriptor of their cookie directory.
        var mailboxes: [Int32: Mailbox] = [:]
    }

    private let shared = Mutex(Shared())

    /// The instance's descriptor, starting the thread on first use.
    func descriptor() async throws(InotifyError) -> InotifyDescriptor {
        let result = await withCheckedContinuation {
            (continuation: CheckedContinuation<Result<InotifyDescriptor, InotifyError>, Never>) in
            let start: Bool = shared.withLock { shared in
                switch shared.phase {
                case .idle:
                    shared.phase = .starting([continuation])
                    return true
                case .starting(let waiting):
                    shared.phase = .starting(waiting + [continuation])
                case .running(let descriptor):
                    continuation.resume(returning: .success(descriptor))
                case .failed(let error):
                    continuation.resume(returning: .failure(error))
                }
                return false
            }
            if start { spawn() }
        }
        return try result.get()
    }

    func register(_ mailbox: Mailbox, cookieWatch: Int32) {
        mailbox.isRegistered = true
        shared.withLock { $0.mailboxes[cookieWatch] = mailbox }
    }

    fileprivate func mailbox(forCookieWatch wd: Int32) -> Mailbox? {
        shared.withLock { $0.mailboxes[wd] }
    }

    fileprivate func unregister(cookieWatch wd: Int32) {
        shared.withLock { $0.mailboxes[wd] = nil }
    }

    private func spawn() {
        var thread = pthread_t()
        let box = Unmanaged.passRetained(self).toOpaque()
        let created = pthread_create(&thread, nil, { argument in
            let owner = Unmanaged<WatcherThread>.fromOpaque(argument!).takeRetainedValue()
            owner.run()
            return nil
        }, box)
        if created != 0 {
            Unmanaged<WatcherThread>.fromOpaque(box).release()
            finishStart(.failure(.initializationFailed(.init(rawValue: created))))
        } else {
            pthread_detach(thread)
        }
    }

    private func finishStart(_ result: Result<InotifyDescriptor, InotifyError>) {
        let waiting: [CheckedContinuation<Result<InotifyDescriptor, InotifyError>, Never>] = shared.withLock { shared in
            guard case .starting(let waiting) = shared.phase else { return [] }
            switch result {
            case .success(let descriptor): shared.phase = .running(descriptor)
            case .failure(let error): shared.phase = .failed(error)
            }
            return waiting
        }
        for continuation in waiting { continuation.resume(returning: result) }
    }

    // MARK: - On the watcher thread

    private func run() {
        let instance: InotifyInstance
        do { instance = try InotifyInstance() } catch {
            finishStart(.failure(error))
            return
        }
        finishStart(.success(instance.shared))
        var loop = EventLoop(instance: instance, thread: self)
        loop.run()
    }

    /// The thread's own state: which tree each watch belongs to.
    private struct EventLoop {
        let instance: InotifyInstance
        let thread: WatcherThread
        var sessionsByCookie: [Int32: TreeSession] = [:]
        var registry = WatchRegistry()
        /// When the kernel queue was last seen empty (ns since the epoch).
        var drainedAt = DirectoryListing.wallClockNanoseconds()

        init(instance: InotifyInstance, thread: WatcherThread) {
            self.instance = instance
            self.thread = thread
        }

        mutating func run() {
            while true {
                let event: RawInotifyEvent
                do { event = try instance.nextEvent() } catch {
                    for session in sessionsByCookie.values { session.report(readFailure: error) }
                    return
                }
                dispatch(event)
                if instance.isKernelQueueEmpty { drainedAt = DirectoryListing.wallClockNanoseconds() }
            }
        }

        private mutating func dispatch(_ event: RawInotifyEvent) {
            if event.isOverflow {
                for session in sessionsByCookie.values { session.recoverFromOverflow(unseenSince: drainedAt) }
                performCommandsWhoseCookiesWereLost()
                return
            }
            if let session = registry.owner(of: event.wd) {
                session.handle(event)
                return
            }
            if event.has(IN_DELETE_SELF) || event.has(IN_MOVE_SELF), let mailbox = thread.mailbox(forCookieWatch: event.wd) {
                remakeCookieDirectory(of: mailbox, lostWatch: event.wd, wasMoved: event.has(IN_MOVE_SELF))
                return
            }
            if event.has(IN_CREATE), let cookie = UInt64(event.name.dropFirst()), event.name.first == "c" {
                handleCookie(event, sequence: cookie)
            }
        }

        private mutating func handleCookie(_ event: RawInotifyEvent, sequence: UInt64) {
            guard let mailbox = thread.mailbox(forCookieWatch: event.wd) else { return }
            unlink(mailbox.cookieDirectory + "/" + event.name)
            for (_, command) in mailbox.take(upTo: sequence) {
                perform(command, mailbox: mailbox, cookieWatch: event.wd)
            }
        }

        /// Someone deleted or moved the cookie directory (say, the whole state directory): make it
        /// again and watch it, so barriers and commands keep working. The cookies of commands still
        /// waiting went with it or were never made; new ones order those commands after every event
        /// queued up to now, which is after they were requested.
        private mutating func remakeCookieDirectory(of mailbox: Mailbox, lostWatch: Int32, wasMoved: Bool) {
            if wasMoved { instance.removeWatch(lostWatch) }
            thread.unregister(cookieWatch: lostWatch)
            let session = sessionsByCookie.removeValue(forKey: lostWatch)
            let path = mailbox.cookieDirectory
            do throws(InotifyError) {
                let watch = try Self.makeCookieDirectory(path, root: mailbox.root, instance: instance)
                thread.register(mailbox, cookieWatch: watch)
                sessionsByCookie[watch] = session
                for sequence in mailbox.pendingSequences {
                    let fd = open(path + "/c\(sequence)", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
                    if fd >= 0 { close(fd) }
                }
            } catch {
                session?.stop()
                mailbox.isRegistered = false
                mailbox.sink.yield(.failed(error))
                mailbox.sink.finish()
            }
        }

        /// Makes the cookie directory and watches it. A `rm -rf` of the state directory may still
        /// be running, removing what was just made: then try again, a bounded number of times.
        /// Never below a root that is gone: that would bring back a folder someone deleted.
        private static func makeCookieDirectory(_ path: String, root: String, instance: InotifyInstance) throws(InotifyError) -> Int32 {
            var attempt = 0
            while true {
                attempt += 1
                do throws(InotifyError) {
                    guard access(root, F_OK) == 0 else {
                        throw InotifyError.controlDirectoryFailed(path: path, Errno(rawValue: errno))
                    }
                    try DirectoryWatcher.makeDirectories(path)
                    do { return try instance.shared.addCookieWatch(absolutePath: path) } catch {
                        throw InotifyError.controlDirectoryFailed(path: path, error)
                    }
                } catch {
                    guard attempt < 50, case .controlDirectoryFailed(_, .noSuchFileOrDirectory) = error else { throw error }
                    usleep(2_000)
                }
            }
        }

        /// A full queue drops cookie events too. Every command still waiting was requested before
        /// the rescans just made, which cover whatever happened before it, so all can run now.
        private mutating func performCommandsWhoseCookiesWereLost() {
            for cookieWatch in Array(sessionsByCookie.keys) {
                guard let mailbox = thread.mailbox(forCookieWatch: cookieWatch) else { continue }
                for (sequence, command) in mailbox.take(upTo: .max) {
                    unlink(mailbox.cookieDirectory + "/c\(sequence)")
                    perform(command, mailbox: mailbox, cookieWatch: cookieWatch)
                }
            }
        }

        private mutating func perform(_ command: WatcherCommand, mailbox: Mailbox, cookieWatch: Int32) {
            switch command {
            case .start(let continuation):
                let session = TreeSession(mailbox: mailbox, instance: instance, registry: registry)
                sessionsByCookie[cookieWatch] = session
                continuation.resume(returning: session.start())
            case .barrier(let number):
                sessionsByCookie[cookieWatch]?.finishPendingMoves()
                sessionsByCookie[cookieWatch]?.barrierPassed()
                mailbox.sink.yield(.barrier(number))
            case .rescanUnwatched:
                sessionsByCookie[cookieWatch]?.rescanUnwatched(unseenSince: drainedAt)
            case .stop(let continuation):
                sessionsByCookie.removeValue(forKey: cookieWatch)?.stop()
                instance.removeWatch(cookieWatch)
                thread.unregister(cookieWatch: cookieWatch)
                mailbox.isRegistered = false
                rmdir(mailbox.cookieDirectory)
                PrivateCookies.removeBaseIfEmpty(after: mailbox.cookieDirectory)
                mailbox.sink.finish()
                continuation.resume()
            case .stall(let stall):
                stall.stalled.signal()
                stall.released.wait()
            }
        }
    }
}

/// Which tree owns each kernel watch, shared by all sessions on the watcher thread.
///
/// A watch is owned by its session's number, not a reference to it: claiming a hundred thousand
/// watches on a first scan then retains nothing.
///
/// While no two sessions have been enrolled at once (an agent watches one root), the one session's
/// own table of its watches says what it owns, and no table of owners is kept: on 111,111 watches
/// that table took 2 MB (2^18 buckets of 8 bytes). A second session enrolled makes the table from
/// the first one's watches, and from then on every claim goes in it, the latest claim of a watch
/// two overlapping trees share winning, as before.
final class WatchRegistry {
    private var owners: [Int32: UInt32] = [:]
    private var sessions: [UInt32: TreeSession] = [:]
    private var nextNumber: UInt32 = 0
    /// Whether `owners` is kept: set once two sessions were enrolled at once.
    private var tracksOwners = false

    /// Takes `session` in until `retire`; returns the number its watches are claimed for.
    func enroll(_ session: TreeSession) -> UInt32 {
        if !tracksOwners, !sessions.isEmpty {
            tracksOwners = true
            for (number, enrolled) in sessions {
                for wd in enrolled.nodeByWatch.keys { owners[wd] = number }
            }
        }
        nextNumber &+= 1
        sessions[nextNumber] = session
        return nextNumber
    }

    /// Lets a stopped session go; a watch still claimed for it has no owner any more.
    func retire(_ number: UInt32) { sessions[number] = nil }

    func owner(of wd: Int32) -> TreeSession? {
        guard tracksOwners else {
            return sessions.values.first { $0.nodeByWatch[wd] != nil }
        }
        return owners[wd].flatMap { sessions[$0] }
    }

    func claim(_ wd: Int32, for session: UInt32) {
        if tracksOwners { owners[wd] = session }
    }

    /// Makes room for `count` more watches at once, rather than growing by doubling through them.
    func reserve(_ count: Int) {
        if tracksOwners { owners.reserveCapacity(owners.count + count) }
    }

    func release(_ wd: Int32) {
        if tracksOwners { owners[wd] = nil }
    }
}
