// A real directory on disk for the benchmarks that write files (buffers, journal).
import Foundation

/// A fresh directory under the system's temp folder (`TMPDIR`, else /tmp), removed by `remove()`.
///
/// Put `TMPDIR` on the disk under test: on tmpfs an fsync costs nothing.
final class ScratchDirectory: Sendable {
    /// The directory's absolute, symlink-free path.
    let path: String

    /// - Throws: `BenchmarkSetupError` naming the directory when it cannot be made.
    init(purpose: String) throws {
        let template = (NSTemporaryDirectory() as NSString).appendingPathComponent("autosave-bench-\(purpose)-XXXXXX")
        var bytes = Array(template.utf8CString)
        guard let made = mkdtemp(&bytes) else {
            throw BenchmarkSetupError("cannot create a scratch directory \(template): \(String(cString: strerror(errno)))")
        }
        guard let resolved = realpath(made, nil) else {
            throw BenchmarkSetupError("cannot resolve the scratch directory \(String(cString: made)): \(String(cString: strerror(errno)))")
        }
        defer { free(resolved) }
        path = String(cString: resolved)
    }

    /// Deletes the directory and everything in it.
    func remove() {
        try? FileManager.default.removeItem(atPath: path)
    }
}

/// A benchmark could not prepare its inputs; the message names what went wrong.
struct BenchmarkSetupError: Error, CustomStringConvertible {
    let description: String

    init(_ description: String) {
        self.description = description
    }
}
