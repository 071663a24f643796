import Glibc
import Logging
import SystemPackage

extension Workspace {
    /// Makes sure a new file at `path` has a folder to land in: the folder exists, or it is made
    /// (inside the root, logged `folders-created`) when the client asked for it.
    ///
    /// - Throws: `WorkspaceError.noSuchFolder` naming the folder, `.invalidPath` when a symlink
    ///   leads outside the root, `.saveFailed` when a folder cannot be made.
    func prepareFolder(for path: String, createParents: Bool) throws(WorkspaceError) {
        let folder: String
        do {
            _ = try context.writer.resolve(path)
            return
        } catch {
            switch error {
            case .outsideRoot(_, let target):
                throw .invalidPath(path: path, reason: "it leads outside the root (to \(target)) through a symbolic link")
            case _ where error.isNowhereToLand:
                folder = Self.folderShown(landingFolder(of: path), root: root)
            default:
                throw .saveFailed(path: path, error)
            }
        }
        guard createParents else { throw .noSuchFolder(path: path, folder: folder) }
        let absolute = landingFolder(of: path)
        guard absolute.hasPrefix(rootPrefix) else {
            throw .invalidPath(path: path, reason: "its folder \(absolute) is outside the root \(root)")
        }
        var made: [String] = []
        var current = root
        for part in absolute.dropFirst(rootPrefix.count).split(separator: "/") {
            current += "/" + part
            if mkdir(current, 0o777) == 0 {
                made.append(String(current.dropFirst(rootPrefix.count)))
            } else if errno != EEXIST {
                throw .saveFailed(path: path, .system(path: String(current.dropFirst(rootPrefix.count)), operation: "make folder", .init(rawValue: errno)))
            }
        }
        logger.info("folders-created", metadata: ["path": "\(path)", "folders": "\(made.joined(separator: ","))"])
    }

    /// The absolute folder a new file at `path` is created in: its own folder, or for a symlink
    /// to nothing, the folder its target names (as the kernel would create it).
    private func landingFolder(of path: String) -> String {
        var file = root + "/" + path
        for _ in 0..<AtomicWriter.symlinkHopLimit {
            guard let status = Fingerprint.of(file), status.isSymbolicLink, let target = AtomicWriter.linkTarget(file) else { break }
            let folder = String(file[..<file.lastIndex(of: "/")!])
            file = target.hasPrefix("/") ? target : folder + "/" + target
        }
        let folder = String(file[..<file.lastIndex(of: "/")!])
        return PhysicalPath.of(folder) ?? folder
    }

    /// A folder as messages show it: relative to the root when inside it.
    private static func folderShown(_ absolute: String, root: String) -> String {
        absolute.hasPrefix(root + "/") ? String(absolute.dropFirst(root.count + 1)) : absolute
    }
}
