import Dispatch
import SystemPackage

/// Watching and listing one directory: the system calls of a scan, which may run on any thread.
///
/// A scan probes a whole level of the tree at once, spread over the cores (most of a first walk
/// is kernel time in `inotify_add_watch` and `getdents`), then applies the results to its nodes
/// on the watcher's thread. Each probe watches before it lists, so nothing created in between
/// goes unseen.
struct DirectoryProbe: Sendable {
    /// The watch descriptor, or why the directory could not be watched.
    var watch: Result<Int32, Errno>
    /// The entries, or nil when the directory vanished or cannot be read.
    var entries: [DirectoryEntry]?

    init(_ absolutePath: String, instance: InotifyDescriptor, statFiles: Bool) {
        do throws(Errno) { watch = .success(try instance.addTreeWatch(absolutePath: absolutePath)) } catch {
            watch = .failure(error)
        }
        entries = try? DirectoryListing.entries(of: absolutePath, statFiles: statFiles)
    }

    /// Probes every path, in parallel when there are enough to be worth the threads; the results
    /// come back in the order of `absolutePaths`.
    static func probe(_ absolutePaths: [String], instance: InotifyDescriptor, statFiles: Bool) -> [DirectoryProbe] {
        guard absolutePaths.count >= parallelThreshold else {
            return absolutePaths.map { DirectoryProbe($0, instance: instance, statFiles: statFiles) }
        }
        let results = ProbeResults(count: absolutePaths.count)
        DispatchQueue.concurrentPerform(iterations: absolutePaths.count) { index in
            results.store(DirectoryProbe(absolutePaths[index], instance: instance, statFiles: statFiles), at: index)
        }
        return results.collect()
    }

    /// Below this many directories, handing them to other threads costs more than it saves.
    static var parallelThreshold: Int { 8 }
}

/// Slots that `concurrentPerform`'s iterations fill, each its own; read once they have all returned.
private final class ProbeResults: @unchecked Sendable {
    // Unchecked: each index is written by exactly one iteration, and `collect` runs after
    // `concurrentPerform` returned, which orders every write before the read.
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

    func collect() -> [DirectoryProbe] { slots.map { $0! } }
}
