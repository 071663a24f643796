import ByteNames
import Glibc
import SystemPackage

extension PathResolver {
    /// One resolution under way: the folders reached, the one held open, the names still to take.
    ///
    /// Names are taken from a stack, so a link's target is pushed in front of the rest of the path
    /// and `..` after a link climbs from where the link led, as in the kernel.
    struct Walk: ~Copyable {
        let path: String
        let resolver: PathResolver
        let makingFolders: Bool
        /// The folders from the root to the one open, as they really are.
        var folders: [String] = []
        /// The open folder (`folders`); -1 once handed to a `Location`.
        var folder: CInt = -1
        /// The names still to take, the next one last.
        var pending: [String] = []
        var hops = 0
        /// The client's own name for the file, once the walk reaches its last component.
        var key: String?
        /// The last link followed, for a refusal to name.
        var lastLink: PathRefusal.Link?
        /// While the walk is below a folder that does not exist: how deep that folder is. Names
        /// are then taken as written, since a missing folder holds no link.
        var missingDepth: Int?
        var madeFolders: [String] = []

        init(path: String, resolver: PathResolver, makingFolders: Bool) {
            self.path = path
            self.resolver = resolver
            self.makingFolders = makingFolders
        }

        deinit { if folder >= 0 { close(folder) } }

        mutating func run(_ named: [String]) throws(WalkFailure) -> Resolution {
            folder = try refusing { () throws(PathRefusal) in try resolver.openRoot() }
            pending = named.reversed()
            try takeFoldersAtOnce(named)
            while let name = pending.popLast() {
                if name == "." { continue }
                if name == ".." {
                    try climb()
                    continue
                }
                try check(name, below: folders)
                let isLast = pending.isEmpty
                if missingDepth != nil {
                    if isLast { return finish(name) }
                    folders.append(name)
                    continue
                }
                if isLast {
                    var status = stat()
                    if fstatat(folder, name, &status, AT_SYMLINK_NOFOLLOW) == 0 {
                        if status.st_mode & S_IFMT == S_IFLNK {
                            if key == nil { key = Self.joined(folders, name) }
                            try follow(name)
                            continue
                        }
                    } else if errno != ENOENT {
                        throw .refused(.system(path: path, operation: "stat \(Self.joined(folders, name))", Errno(rawValue: errno)))
                    }
                    return finish(name)
                }
                try enter(name)
            }
            // The last name was `.` or `..` that a link held: it names a folder.
            throw .refused(.malformed(path: path, reason: "it leads to a folder (through the link \(lastLink?.path ?? "")), not a file"))
        }

        /// When no `..` is on the way: every folder opened in one `openat2` call, which fails if
        /// any is a link (the walk then takes them one by one).
        private mutating func takeFoldersAtOnce(_ named: [String]) throws(WalkFailure) {
            guard !named.contains(".."), let last = named.last else { return }
            let names = named.dropLast().filter { $0 != "." }
            guard !names.isEmpty else { return }
            var probe: [String] = []
            for name in names {
                try check(name, below: probe)
                probe.append(name)
            }
            guard let opened = resolver.openAllAtOnce(names, in: folder) else { return }
            close(folder)
            folder = opened
            folders = names
            pending = [last]
        }

        /// `..`: back to the folder above, never above the root.
        private mutating func climb() throws(WalkFailure) {
            guard !folders.isEmpty else {
                if let lastLink { throw .refused(.linkLeadsOutside(path: path, link: lastLink.path, target: lastLink.target)) }
                throw .refused(.outsideRoot(path: path))
            }
            folders.removeLast()
            if let depth = missingDepth {
                guard folders.count < depth else { return }
                missingDepth = nil
            }
            close(folder)
            folder = -1
            // Opened again from the root, one real folder after another: a folder swapped for a
            // link since it was passed makes the whole walk start again.
            guard let reopened = try refusing({ () throws(PathRefusal) in try resolver.openFolder(folders) }) else { throw .swapped }
            folder = reopened
        }

        /// A folder on the way: opened without following it, or followed when it is a link.
        private mutating func enter(_ name: String) throws(WalkFailure) {
            let next = PathResolver.openFolder(name, in: folder)
            if next >= 0 {
                close(folder)
                folder = next
                folders.append(name)
                return
            }
            let code = errno
            switch code {
            case ENOENT where makingFolders:
                if mkdirat(folder, name, 0o777) == 0 {
                    madeFolders.append(Self.joined(folders, name))
                    // Durably, as `Folders.make` makes the agent's: a cut that took the new folder
                    // would take the file saved in it, and the save was reported durable.
                    fsync(folder)
                } else if errno != EEXIST {
                    throw .refused(.system(path: path, operation: "make folder \(Self.joined(folders, name))", Errno(rawValue: errno)))
                }
                guard madeFolders.count <= PathResolver.linkLimit * 8 else { throw .swapped }
                pending.append(name)
            case ENOENT:
                folders.append(name)
                missingDepth = folders.count
            case ELOOP, ENOTDIR:
                var status = stat()
                guard fstatat(folder, name, &status, AT_SYMLINK_NOFOLLOW) == 0 else { throw .swapped }
                if status.st_mode & S_IFMT == S_IFLNK {
                    try follow(name)
                } else if code == ENOTDIR {
                    throw .refused(.notAFolder(path: path, component: Self.joined(folders, name)))
                } else {
                    throw .swapped
                }
            default:
                throw .refused(.system(path: path, operation: "open folder \(Self.joined(folders, name))", Errno(rawValue: code)))
            }
        }

        /// The link `name` in the open folder: what it holds goes in front of the rest of the path.
        private mutating func follow(_ name: String) throws(WalkFailure) {
            let linkPath = Self.joined(folders, name)
            guard resolver.links == .followInside else { throw .refused(.linkInAgentFolder(path: path, link: linkPath)) }
            hops += 1
            guard hops <= PathResolver.linkLimit else { throw .refused(.tooManyLinks(path: path)) }
            guard let target = try PathResolver.linkTarget(name, in: folder) else {
                throw .refused(.malformed(path: path, reason: "the link \(linkPath) holds a target that is not UTF-8"))
            }
            guard !target.isEmpty else { throw .refused(.malformed(path: path, reason: "the link \(linkPath) is empty")) }
            lastLink = PathRefusal.Link(path: linkPath, target: target)
            guard target.isAbsolutePath else {
                pending.append(contentsOf: target.pathComponents.reversed())
                return
            }
            // An absolute link counts only when it names the root itself or a path below it.
            let below = target.pathComponents.isEmpty ? nil : (target.isSameName(as: resolver.root) ? "" : target.pathBelow(resolver.root))
            guard let below, target.isPath(inside: resolver.root) else {
                throw .refused(.linkLeadsOutside(path: path, link: linkPath, target: target))
            }
            close(folder)
            folder = -1
            folder = try refusing { () throws(PathRefusal) in try resolver.openRoot() }
            folders = []
            pending.append(contentsOf: below.pathComponents.reversed())
        }

        /// Refuses a name that would take the walk into `.git/` or the state directory.
        private func check(_ name: String, below folders: [String]) throws(WalkFailure) {
            if resolver.protectsGit, name.isSameName(as: ".git") {
                throw .refused(.insideGit(path: path, link: lastLink))
            }
            if let state = resolver.stateDirectory, folders.count + 1 == state.count,
                name.isSameName(as: state[state.count - 1]),
                zip(folders, state).allSatisfy({ $0.isSameName(as: $1) })
            {
                throw .refused(.insideStateDirectory(path: path, link: lastLink))
            }
        }

        /// The walk's answer: the file's folder handed to a `Location`, or the missing folder.
        private mutating func finish(_ name: String) -> Resolution {
            let full = Self.joined(folders, name)
            // A missing folder is named as the file's own folder: the one that must exist for it.
            var resolution = Resolution(
                key: key ?? full, location: nil, missingFolder: missingDepth == nil ? nil : folders.joined(separator: "/"),
                madeFolders: madeFolders)
            if missingDepth == nil {
                resolution.location = Location(folder: folder, name: name, path: full)
                folder = -1
            }
            return resolution
        }

        private func refusing<T>(_ body: () throws(PathRefusal) -> T) throws(WalkFailure) -> T {
            do { return try body() } catch { throw .refused(error) }
        }

        static func joined(_ folders: [String], _ name: String) -> String {
            folders.isEmpty ? name : folders.joined(separator: "/") + "/" + name
        }
    }
}
