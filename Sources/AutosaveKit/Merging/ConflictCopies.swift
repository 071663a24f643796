import ByteNames
import FoundationEssentials
import Glibc
import Logging
import SystemPackage

/// Keeps the losing side of an overlap in `<stateDir>/conflicts/`, never beside the source where
/// tools would pick it up.
///
/// A copy is named `<relative path>.<UTC yyyyMMdd-HHmmss>.<revision>`, written durably, never
/// deleted by the agent; a name too long for that is shortened to fit (`stem(for:leaving:)`). A
/// copy identical to an existing one for the same file is not written twice.
public struct ConflictCopies: Sendable {
    /// `<stateDir>/conflicts`.
    public let directory: String
    public let maxCopiesPerFile: Int
    /// Writes the copies, through no link: the folder is the agent's own and holds none.
    let writer: AtomicWriter

    public init(stateDirectory: String, maxCopiesPerFile: Int, fsync: Bool) {
        self.directory = stateDirectory + "/conflicts"
        self.maxCopiesPerFile = maxCopiesPerFile
        self.writer = AtomicWriter(resolver: .agentFolder(directory), fsync: fsync, hardLinks: .break)
    }

    /// The outcome of keeping a copy.
    public struct Kept: Sendable, Equatable {
        /// The copy's path, absolute.
        public var path: String
        /// How many copies the file has now.
        public var count: Int
        /// Whether an identical earlier copy was reused.
        public var isDuplicate: Bool
    }

    /// Writes `bytes` as a copy of `path` at `revision`, durably.
    ///
    /// The copy's folders are made one at a time inside the conflicts folder, and a symbolic link
    /// met on the way (a repository can ship one) is refused, never followed.
    ///
    /// - Throws: `WriteError` when the copy cannot be written; the caller must then keep both
    ///   versions some other way.
    public func keep(_ bytes: [UInt8], of path: String, revision: Int, at date: Date = Date()) throws(WriteError) -> Kept {
        let parts = path.pathComponents
        let name = parts.last ?? path
        let folder = parts.dropLast().joined(separator: "/")
        // mkdir and its errno: Foundation's error code here is a Cocoa one, not an errno.
        do throws(Errno) { try Folders.make(directory) } catch {
            throw .system(path: folder.isEmpty ? directory : directory + "/" + folder, operation: "create conflicts directory", error)
        }
        func inFolder(_ copy: String) -> String { folder.isEmpty ? copy : folder + "/" + copy }
        let stamp = Self.stamp(date)
        let stem = Self.stem(for: name, leaving: ".\(stamp).\(revision)-\(Self.attempts)".utf8.count)
        // Two conflicts of one file in the same second race for a name: the loser takes the next.
        for attempt in 1...Self.attempts {
            let base = "\(stem).\(stamp).\(revision)"
            let copyName = attempt == 1 ? base : "\(base)-\(attempt)"
            let resolution: PathResolver.Resolution
            do { resolution = try writer.resolver.resolve(inFolder(copyName), makingFolders: true) } catch { throw WriteError(error) }
            guard let place = resolution.location else {
                throw .system(path: directory + "/" + folder, operation: "create conflicts folder", .noSuchFileOrDirectory)
            }
            let existing = AgentFolderTree.entries(of: place.folder).map(\.name).filter {
                $0.hasBytePrefix(stem + ".") && !$0.hasBytePrefix(".")
            }
            for copy in existing where Self.holds(bytes, copy, in: place.folder) {
                return Kept(path: directory + "/" + inFolder(copy), count: existing.count, isDuplicate: true)
            }
            guard !existing.contains(where: { $0.isSameName(as: copyName) }) else { continue }
            do {
                _ = try writer.write(bytes, to: inFolder(copyName), expecting: nil)
            } catch .changedOnDisk {
                continue
            }
            return Kept(path: directory + "/" + inFolder(copyName), count: existing.count + 1, isDuplicate: false)
        }
        throw .system(path: directory + "/" + path, operation: "name a conflict copy", .fileExists)
    }

    /// How many names one copy tries before it gives up (two conflicts of a file in one second).
    static var attempts: Int { 1000 }

    /// The file's name as its copies begin: the name itself when the copy's name fits in
    /// `NAME_MAX` (255 bytes) with `suffix` more bytes after it, else the name shortened at a
    /// character's edge, a `~` and eight hex digits of the whole name's digest (so two long names
    /// alike at the start keep apart), and its extension (so the copy opens as the file does).
    static func stem(for name: String, leaving suffix: Int) -> String {
        let limit = 255 - suffix
        guard name.utf8.count > limit else { return name }
        let bytes = Array(name.utf8)
        let dot = bytes.lastIndex(of: UInt8(ascii: "."))
        let extensionBytes = dot.map { bytes.count - $0 } ?? 0
        let keepsExtension = dot != nil && dot! > 0 && extensionBytes <= 16
        let tail = (keepsExtension ? Array(bytes[dot!...]) : [])
        let digest = String(ContentDigest.of(bytes) & 0xFFFF_FFFF, radix: 16)
        let mark = Array(("~" + String(repeating: "0", count: 8 - digest.count) + digest).utf8)
        var head = Array(bytes[..<(keepsExtension ? dot! : bytes.count)].prefix(max(0, limit - mark.count - tail.count)))
        // Cut at a character's edge: a last character the cut left incomplete goes whole.
        if let lead = head.lastIndex(where: { $0 & 0xC0 != 0x80 }), head[lead] >= 0xC0 {
            let length = head[lead] >= 0xF0 ? 4 : head[lead] >= 0xE0 ? 3 : 2
            if head.count - lead < length { head.removeSubrange(lead...) }
        }
        return String(decoding: head + mark + tail, as: UTF8.self)
    }

    /// Whether the regular file `name` in `folder` holds exactly `bytes` (never through a link).
    private static func holds(_ bytes: [UInt8], _ name: String, in folder: CInt) -> Bool {
        let fd = openat(folder, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        guard let old = try? FileContents.read(descriptor: FileDescriptor(rawValue: fd)) else { return false }
        return old == bytes
    }

    /// Removes the temp files a crash left in the conflicts directory (it is not watched, so the
    /// start-up scan of the tree does not see them) and returns their paths.
    public func removeLeftoverTempFiles() -> [String] {
        var removed: [String] = []
        for relative in AgentFolderTree.files(below: directory) {
            let name = relative.pathComponents.last ?? relative
            if IgnoreRules.isAgentTempName(name), AgentFolderTree.remove(relative, below: directory) {
                removed.append(directory + "/" + relative)
            }
        }
        return removed
    }

    /// `yyyyMMdd-HHmmss` in UTC.
    static func stamp(_ date: Date) -> String {
        var seconds = time_t(date.timeIntervalSince1970)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(parts.tm_year + 1900)\(two(parts.tm_mon + 1))\(two(parts.tm_mday))-"
            + "\(two(parts.tm_hour))\(two(parts.tm_min))\(two(parts.tm_sec))"
    }
}
