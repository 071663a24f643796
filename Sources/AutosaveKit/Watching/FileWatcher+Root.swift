import ByteNames
import Glibc

/// The root itself: whether it is still there, and where it went.
extension FileWatcher {
    /// Whether the root directory was removed (an open directory removed has no links left).
    var isRootRemoved: Bool {
        var status = stat()
        if rootDescriptor >= 0, fstat(rootDescriptor, &status) == 0 { return status.st_nlink == 0 }
        return lstat(configuration.root, &status) != 0
    }

    /// Looks whether the root is still there; reports its removal once if not.
    public func checkRoot() {
        if isRootRemoved { reportRootRemoved() }
    }

    func reportRootRemoved() {
        rootChangesContinuation.yield(.removed)
        rootChangesContinuation.finish()
    }

    /// The root was renamed: where it is now, from the descriptor held on it.
    func reportRootMoved() {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = readlink("/proc/self/fd/\(rootDescriptor)", &buffer, buffer.count - 1)
        let target = count > 0 ? String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self) : ""
        guard target.isAbsolutePath, !target.utf8.reversed().starts(with: " (deleted)".utf8.reversed()), !isRootRemoved else {
            reportRootRemoved()
            return
        }
        rootChangesContinuation.yield(.moved(to: target))
        rootChangesContinuation.finish()
    }
}
