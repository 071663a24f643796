import ByteNames
import Glibc

/// The files below a folder of the agent's own (the conflict copies), walked without following
/// any link: a link planted there is an entry, never a way out.
enum AgentFolderTree {
    /// One entry of a folder.
    struct Entry {
        var name: String
        var isFolder: Bool
        var isRegularFile: Bool
        var isSymbolicLink: Bool
    }

    /// The entries of the open folder `folder` (`.` and `..` left out); empty when it cannot be read.
    static func entries(of folder: CInt) -> [Entry] {
        let copy = dup(folder)
        guard copy >= 0, let stream = fdopendir(copy) else {
            if copy >= 0 { close(copy) }
            return []
        }
        defer { closedir(stream) }
        rewinddir(stream)
        var result: [Entry] = []
        while let entry = readdir(stream) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name == "." || name == ".." { continue }
            var status = stat()
            guard fstatat(folder, name, &status, AT_SYMLINK_NOFOLLOW) == 0 else { continue }
            let kind = status.st_mode & S_IFMT
            result.append(Entry(name: name, isFolder: kind == S_IFDIR, isRegularFile: kind == S_IFREG, isSymbolicLink: kind == S_IFLNK))
        }
        return result
    }

    /// Every regular file below `path` (absolute), relative to it; links are neither followed
    /// nor listed.
    static func files(below path: String) -> [String] {
        var result: [String] = []
        walk(below: path) { relative, entry in
            if entry.isRegularFile { result.append(relative) }
        }
        return result
    }

    /// Every symbolic link below `path` (absolute), relative to it.
    static func links(below path: String) -> [String] {
        var result: [String] = []
        walk(below: path) { relative, entry in
            if entry.isSymbolicLink { result.append(relative) }
        }
        return result
    }

    /// Calls `body` with each entry below `path` and its path relative to `path`, folders
    /// before what they hold; a link is an entry, never walked into.
    private static func walk(below path: String, _ body: (String, Entry) -> Void) {
        let top = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard top >= 0 else { return }
        var stack: [(fd: CInt, prefix: String)] = [(top, "")]
        while let (folder, prefix) = stack.popLast() {
            defer { close(folder) }
            for entry in entries(of: folder) {
                let relative = prefix.isEmpty ? entry.name : prefix + "/" + entry.name
                body(relative, entry)
                guard entry.isFolder else { continue }
                let next = openat(folder, entry.name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
                if next >= 0 { stack.append((next, relative)) }
            }
        }
    }

    /// Removes `relative` below `path` (absolute) if it is still a file there, reached without
    /// following a link; whether it was removed.
    static func remove(_ relative: String, below path: String) -> Bool {
        let resolver = PathResolver.agentFolder(path)
        guard let location = try? resolver.resolve(relative).location else { return false }
        return unlinkat(location.folder, location.name, 0) == 0
    }
}
