import FoundationEssentials
import Glibc
import Logging
import SystemPackage

/// Keeps the losing side of an overlap in `<stateDir>/conflicts/`, never beside the source where
/// tools would pick it up.
///
/// A copy is named `<relative path>.<UTC yyyyMMdd-HHmmss>.<revision>`, written durably, never
/// deleted by the agent. A copy identical to an existing one for the same file is not written twice.
public struct ConflictCopies: Sendable {
    /// `<stateDir>/conflicts`.
    public let directory: String
    public let maxCopiesPerFile: Int
    let fsync: Bool

    public init(stateDirectory: String, maxCopiesPerFile: Int, fsync: Bool) {
        self.directory = stateDirectory + "/conflicts"
        self.maxCopiesPerFile = maxCopiesPerFile
        self.fsync = fsync
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
    /// - Throws: `WriteError` when the copy cannot be written; the caller must then keep both
    ///   versions some other way.
    public func keep(_ bytes: [UInt8], of path: String, revision: Int, at date: Date = Date()) throws(WriteError) -> Kept {
        let target = directory + "/" + path
        let parent = PathText.parent(of: target)
        let name = PathText.lastComponent(of: target)
        // mkdir and its errno: Foundation's error code here is a Cocoa one, not an errno.
        do throws(Errno) { try Folders.make(parent) } catch {
            throw .system(path: parent, operation: "create conflicts directory", error)
        }
        let writer = AtomicWriter(root: parent, fsync: fsync, hardLinks: .break)
        // Two conflicts of one file in the same second race for a name: the loser takes the next.
        for attempt in 1...1000 {
            let existing = ((try? FileManager.default.contentsOfDirectory(atPath: parent)) ?? [])
                .filter { $0.hasPrefix(name + ".") && !$0.hasPrefix(".") }
            for copy in existing {
                if let old = try? FileContents.read(parent + "/" + copy), old == bytes {
                    return Kept(path: parent + "/" + copy, count: existing.count, isDuplicate: true)
                }
            }
            let base = "\(name).\(Self.stamp(date)).\(revision)"
            let copyName = attempt == 1 ? base : "\(base)-\(attempt)"
            guard !existing.contains(copyName) else { continue }
            do {
                _ = try writer.write(bytes, to: copyName, expecting: nil)
            } catch .changedOnDisk {
                continue
            }
            return Kept(path: parent + "/" + copyName, count: existing.count + 1, isDuplicate: false)
        }
        throw .system(path: target, operation: "name a conflict copy", .fileExists)
    }

    /// Removes the temp files a crash left in the conflicts directory (it is not watched, so the
    /// start-up scan of the tree does not see them) and returns their paths.
    public func removeLeftoverTempFiles() -> [String] {
        let names = (try? FileManager.default.subpathsOfDirectory(atPath: directory)) ?? []
        var removed: [String] = []
        for relative in names {
            let name = PathText.lastComponent(of: relative)
            if IgnoreRules.isAgentTempName(name), unlink(directory + "/" + relative) == 0 {
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
