import Logging

extension Workspace {
    /// Makes sure a new file at `path` has a folder to land in: the folder exists, or it is made
    /// (inside the root, logged `folders-created`) when the client asked for it.
    ///
    /// The folders are made by the resolver, one at a time in the folder before them: a folder
    /// swapped for a link meanwhile is not followed, so none is ever made outside the root.
    ///
    /// - Throws: `WorkspaceError.noSuchFolder` naming the folder, `.pathRefused` when a symlink
    ///   leads out of bounds, `.saveFailed` when a folder cannot be made.
    func prepareFolder(for path: String, createParents: Bool) throws(WorkspaceError) {
        let found: PathResolver.Resolution
        do { found = try resolver.resolve(path) } catch { throw WorkspaceError(error) }
        guard let missing = found.missingFolder, found.location == nil else { return }
        guard createParents else { throw .noSuchFolder(path: path, folder: missing) }
        let made: PathResolver.Resolution
        do { made = try resolver.resolve(path, makingFolders: true) } catch {
            if case .system(_, let operation, let errno) = error {
                throw .saveFailed(path: path, .system(path: path, operation: operation, errno))
            }
            throw WorkspaceError(error)
        }
        logger.info("folders-created", metadata: ["path": "\(path)", "folders": "\(made.madeFolders.joined(separator: ","))"])
    }
}
