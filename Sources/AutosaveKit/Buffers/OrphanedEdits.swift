import ByteNames
import FoundationEssentials
import Glibc
import SystemPackage

/// Where unsaved edits go when the root itself is deleted under the agent: a folder of the user's
/// state, outside any project, `$XDG_STATE_HOME/autosave/orphans/<root name>-<short hash>/`
/// (`~/.local/state` when `XDG_STATE_HOME` is unset), with each file at its relative path.
struct OrphanedEdits: Sendable {
    /// The folder this root's orphans go to.
    let directory: String

    init(root: String, environment: [String: String] = ProcessInfo.processInfo.environment) {
        let base = environment["XDG_STATE_HOME"].flatMap { $0.isAbsolutePath ? $0 : nil }
            ?? (environment["HOME"] ?? Self.homeFromPasswd()) + "/.local/state"
        let name = root.pathComponents.last ?? "root"
        directory = base + "/autosave/orphans/\(name)-\(Self.shortHash(root))"
    }

    /// Writes `bytes` as the orphan of `path` (relative to the root), durably, and returns where.
    ///
    /// - Throws: `WriteError.system` naming the copy's path and what failed.
    func keep(_ bytes: [UInt8], of path: String) throws(WriteError) -> String {
        let target = directory + "/" + path
        let parent = PathText.parent(of: target)
        var partial = ""
        for component in parent.pathComponents {
            partial += "/" + component
            do throws(Errno) { try SystemCall.check { mkdir(partial, 0o700) } } catch {
                guard error == .fileExists else { throw .system(path: partial, operation: "create folder", error) }
            }
        }
        let file = try WriteError.step("create", target) { () throws(Errno) in
            try FileDescriptor.currentDirectory.open(
                target, .writeOnly, options: [.create, .truncate, .closeOnExec, .noFollow], permissions: [.ownerReadWrite])
        }
        defer { try? file.close() }
        try WriteError.step("write", target) { () throws(Errno) in try file.writeAll(bytes, atOffset: 0) }
        try WriteError.step("fsync", target) { () throws(Errno) in try file.sync() }
        return target
    }

    /// The user's home folder from the password database, for when `HOME` is unset (a service).
    static func homeFromPasswd() -> String {
        guard let entry = getpwuid(getuid()), let home = entry.pointee.pw_dir else { return "/tmp" }
        return String(cString: home)
    }

    /// Eight hex digits of FNV-1a over the root's path: two projects of one name stay apart.
    static func shortHash(_ text: String) -> String {
        var hash: UInt32 = 2_166_136_261
        for byte in text.utf8 {
            hash ^= UInt32(byte)
            hash = hash &* 16_777_619
        }
        let digits = String(hash, radix: 16)
        return String(repeating: "0", count: 8 - digits.count) + digits
    }
}
