import Glibc
import Synchronization
import SystemPackage

/// Watching and listing one directory: the system calls of a scan, which may run on any thread.
///
/// A scan probes a whole level of the tree at once, on `threadCount` threads (most of a first
/// walk is kernel time in `inotify_add_watch` and `getdents`, and on a cold cache waiting for the
/// disk), then applies the results to its nodes on the watcher's thread. Each probe watches
/// before it lists, so nothing created in between goes unseen.
struct DirectoryProbe: Sendable {
    /// The watch descriptor, or why the directory could not be watched.
    var watch: Result<Int32, Errno>
    /// What the directory holds, or nil when it vanished or cannot be read.
    var contents: DirectoryContents?

    /// Probes the directory of `target`, the filter its listing applies (which knows its path);
    /// `collector` is the probing thread's scratch for file names.
    init(_ target: EntryFilter, instance: InotifyDescriptor, statFiles: Bool, collector: inout FileNameCollector) {
        // Made here, on the probe's thread and its stack: a level's 90,000 paths are built in
        // parallel, and none is a `String`.
        (watch, contents) = target.mailbox.withAbsolutePath(of: target.directory) { absolutePath in
            let watch: Result<Int32, Errno>
            do throws(Errno) { watch = .success(try instance.addTreeWatch(absolutePath: absolutePath)) } catch {
                watch = .failure(error)
            }
            let contents = try? DirectoryListing.contents(
                of: absolutePath, statFiles: statFiles, filter: target, collector: &collector)
            return (watch, contents)
        }
    }

    /// Starts probing every target, in parallel when there are enough to be worth the threads;
    /// `ProbeRun.results()` waits for them, by the index of `targets`. The caller may take in
    /// an earlier run's results meanwhile.
    static func start(_ targets: [EntryFilter], instance: InotifyDescriptor, statFiles: Bool) -> ProbeRun {
        guard targets.count >= parallelThreshold else {
            var collector = FileNameCollector()
            let results = ProbeResults(count: targets.count)
            for (index, target) in targets.enumerated() {
                results.store(DirectoryProbe(target, instance: instance, statFiles: statFiles, collector: &collector), at: index)
            }
            return ProbeRun(done: results)
        }
        let results = ProbeResults(count: targets.count)
        let next = Atomic(0)
        let threads = startThreads(min(threadCount, targets.count)) {
            var collector = FileNameCollector()
            while true {
                let index = next.add(1, ordering: .relaxed).oldValue
                guard index < targets.count else { return }
                results.store(
                    DirectoryProbe(targets[index], instance: instance, statFiles: statFiles, collector: &collector),
                    at: index)
            }
        }
        return ProbeRun(threads: threads, results: results)
    }

    /// Threads probing at once: more than the cores, so that directories not in the cache wait
    /// for the disk together. 10,000 directories after `drop_caches`: 16 threads 310-365 ms, the
    /// two of `concurrentPerform` (one per core) 715-865 ms, 8 threads 350-390 ms; with the cache
    /// warm, about the same. The cost: each thread's malloc arena keeps a little of what it
    /// allocated, 2.4 MB of RSS in all after that scan (1 MB with 8 threads).
    static var threadCount: Int { 16 }

    /// Below this many directories, handing them to other threads costs more than it saves.
    static var parallelThreshold: Int { 8 }
}

/// Slots that the probe threads fill, each its own; read once they have all been joined.
final class ProbeResults: @unchecked Sendable {
    // Unchecked: each index is written by exactly one thread, and `take` runs after every
    // thread was joined, which orders every write before the read.
    private let slots: UnsafeMutableBufferPointer<DirectoryProbe?>

    init(count: Int) {
        slots = .allocate(capacity: count)
        slots.initialize(repeating: nil)
    }

    deinit {
        slots.deinitialize()
        slots.deallocate()
    }

    func store(_ probe: DirectoryProbe, at index: Int) { slots[index] = probe }

    /// Moves the probe at `index` out, leaving its slot empty; once per index.
    func take(_ index: Int) -> DirectoryProbe {
        // Moved rather than copied: a copy would retain each listing's buffers, and the slots'
        // deinitialisation release them again, a few times per directory.
        let slot = slots.baseAddress! + index
        let probe = slot.move()!
        slot.initialize(to: nil)
        return probe
    }
}

/// Probes under way on threads of their own; `results()` joins them.
struct ProbeRun {
    private var threads: [pthread_t] = []
    private let pending: ProbeResults

    init(done: ProbeResults) { pending = done }

    init(threads: [pthread_t], results: ProbeResults) {
        self.threads = threads
        pending = results
    }

    /// Waits for every probe; the results hold them by the index of their targets.
    consuming func results() -> ProbeResults {
        for thread in threads { pthread_join(thread, nil) }
        return pending
    }
}

/// Starts `body` on `count` threads of its own at once; the caller joins them. Without a thread
/// of its own (none could be made), the work still gets done, here, before this returns.
///
/// Plain threads, not Dispatch's pool, which keeps to one thread per core while they block.
private func startThreads(_ count: Int, _ body: @escaping @Sendable () -> Void) -> [pthread_t] {
    final class Work: Sendable {
        let body: @Sendable () -> Void
        init(_ body: @escaping @Sendable () -> Void) { self.body = body }
    }
    var threads: [pthread_t] = []
    for _ in 0..<count {
        var thread = pthread_t()
        let work = Unmanaged.passRetained(Work(body)).toOpaque()
        let created = pthread_create(&thread, nil, { argument in
            Unmanaged<Work>.fromOpaque(argument!).takeRetainedValue().body()
            return nil
        }, work)
        if created == 0 {
            threads.append(thread)
        } else {
            Unmanaged<Work>.fromOpaque(work).release()
        }
    }
    if threads.isEmpty { body() }
    return threads
}
