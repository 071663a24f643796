import ByteNames
import Glibc

/// The agent's state directory — its journal of unsaved edits, lock, socket and conflict copies —
/// checked before the agent uses it: no folder on the way to it from the root, and nothing in
/// it, is a symbolic link.
///
/// A repository can ship `.autosave/journal -> /somewhere`; followed, the journal (unsaved edits)
/// would land outside the project. The check runs when the agent starts; afterwards every folder
/// the agent makes or enters there refuses a link (`Folders.make`, `PathResolver.agentFolder`)
/// and every file it opens there is opened with `O_NOFOLLOW`.
public enum StateDirectory {
    /// A symbolic link where the agent keeps its own files.
    public struct LinkFound: Error, Equatable, CustomStringConvertible {
        /// The link, absolute.
        public var path: String
        /// What it holds.
        public var target: String

        public var description: String {
            "\(path) is a symbolic link (to \(target)) in the agent's state directory, which would put unsaved edits, "
                + "the lock or the socket outside the project; nothing was started: remove it (rm '\(path)') and start again"
        }
    }

    /// Checks the state directory `directory` (absolute) of the project at `root`.
    ///
    /// - Throws: `LinkFound` naming the first link: a folder between the root and the state
    ///   directory, the state directory itself, or anything below it.
    public static func verify(_ directory: String, root: String) throws(LinkFound) {
        var partial = root
        for name in (directory.pathBelow(root) ?? "").pathComponents {
            partial += "/" + name
            var status = stat()
            guard lstat(partial, &status) == 0 else { return }
            if status.st_mode & S_IFMT == S_IFLNK { throw LinkFound(path: partial, target: target(of: partial)) }
        }
        if let link = AgentFolderTree.links(below: directory).first {
            let path = directory + "/" + link
            throw LinkFound(path: path, target: target(of: path))
        }
    }

    private static func target(of link: String) -> String {
        var buffer = [UInt8](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = buffer.withUnsafeMutableBufferPointer {
            $0.withMemoryRebound(to: CChar.self) { readlink(link, $0.baseAddress!, $0.count - 1) }
        }
        return count < 0 ? "?" : String(decoding: buffer[..<count], as: UTF8.self)
    }
}
