import ByteNames
import Inotify

/// The files the watcher knows to exist, as of the last settled change.
///
/// Classification needs it ("did this name exist before the burst?"), and so do rescans. Files
/// are grouped by directory so a directory move or removal touches one entry per directory, and
/// each directory's names are held compactly (`FileNames`): a million files in about 20 MB.
struct KnownFiles {
    private var directories: PathMap<FileNames> = [:]
    private(set) var count = 0

    init<S: Sequence>(_ paths: S) where S.Element == String {
        for path in paths { insert(path) }
    }

    /// Takes a scan's listings as they are: their name sets are kept, not copied. Handed the
    /// only reference to the array, it moves each listing out rather than retaining its parts
    /// (a first scan of a million files has 100,000 of them, and this runs before `ready`).
    init(_ listings: consuming [DirectoryScan.Listing]) {
        directories.reserveCapacity(listings.count)
        while let listing = listings.popLast() {
            guard !listing.names.isEmpty else { continue }
            count += listing.names.count
            guard let earlier = directories.updateValue(listing.names, forKey: listing.directory) else { continue }
            // A directory listed twice (overlapping scopes): its names are the union.
            for name in earlier {
                if !directories[listing.directory]!.insert(name) { count -= 1 }
            }
        }
    }

    func contains(_ path: String) -> Bool {
        let (directory, name) = Self.split(path)
        return directories[directory]?.contains(name) ?? false
    }

    mutating func insert(_ path: String) {
        let (directory, name) = Self.split(path)
        if directories[directory, default: FileNames()].insert(name) { count += 1 }
    }

    mutating func remove(_ path: String) {
        let (directory, name) = Self.split(path)
        guard directories[directory]?.remove(name) == true else { return }
        count -= 1
        if directories[directory]?.isEmpty == true { directories[directory] = nil }
    }

    /// The files directly inside `directory` (`""` for the root).
    func files(in directory: String) -> [String] {
        (directories[directory] ?? []).map { directory.isEmpty ? $0 : directory + "/" + $0 }
    }

    /// The folders that hold known files (`""` for the root).
    var folders: [String] { directories.keys }

    /// Every known file.
    var all: [String] { directories.keys.flatMap { files(in: $0) } }

    /// Every known file at any depth below `directory`.
    func filesBelow(_ directory: String) -> [String] {
        directories.keys.filter { Self.isSame($0, orBelow: directory) }.flatMap { files(in: $0) }
    }

    /// Forgets everything at or below `directory` and returns how many files that was; `each`
    /// is handed every file forgotten.
    @discardableResult
    mutating func removeDirectory(_ directory: String, each: (String) -> Void = { _ in }) -> Int {
        var removed = 0
        for key in directories.keys where Self.isSame(key, orBelow: directory) {
            guard let names = directories.removeValue(forKey: key) else { continue }
            removed += names.count
            for name in names { each(key.isEmpty ? name : key + "/" + name) }
        }
        count -= removed
        return removed
    }

    /// Moves everything below `from` to below `to`.
    mutating func moveDirectory(from: String, to: String) {
        removeDirectory(to)
        for key in directories.keys where Self.isSame(key, orBelow: from) {
            let moved = to + key.dropFirst(from.count)
            directories[moved] = directories.removeValue(forKey: key)
        }
    }

    static func isSame(_ path: String, orBelow directory: String) -> Bool {
        path.isPath(inside: directory)
    }

    private static func split(_ path: String) -> (String, String) {
        path.folderAndName
    }
}
