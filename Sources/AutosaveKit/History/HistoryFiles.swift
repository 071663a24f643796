import AutosaveHistory

/// How history reads a file an outside change left: through the same walls as a buffer (no link
/// out of the root, into `.git/` or the state directory), only a regular file, only up to
/// `history.maxFileBytes`, and a binary one only up to `history.maxBinaryBytes`.
struct HistoryFiles: Sendable {
    let resolver: PathResolver
    let maxFileBytes: Int
    /// A binary content (`ContentKind.isBinary`) larger than this is not kept: images, archives
    /// and builds would fill the store with what deltas do little for.
    var maxBinaryBytes = Int.max

    /// Whether a version of these bytes is kept.
    func isKept(_ bytes: [UInt8]) -> Bool {
        bytes.count <= maxFileBytes && (bytes.count <= maxBinaryBytes || !ContentKind.isBinary(bytes))
    }

    /// The file's bytes now; nil when there is none, it is too large, not a regular file, or out
    /// of bounds (history then has no version of it, and says nothing: the watcher logged the change).
    func read(_ path: String) -> [UInt8]? {
        readVersion(path)?.bytes
    }

    /// The file's bytes now and the fingerprint they belong to; nil as for `read`.
    func readVersion(_ path: String) -> DiskVersion? {
        do throws(DiskVersion.ReadError) {
            guard let version = try DiskVersion.read(path, resolver: resolver, limit: maxFileBytes), isKept(version.bytes) else {
                return nil
            }
            return version
        } catch {
            return nil
        }
    }
}
