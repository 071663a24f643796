import SystemPackage

/// Whole-file reads with the errno kept, for files the agent must report on precisely.
public enum FileContents {
    /// Reads every byte of `path`.
    ///
    /// - Throws: `Errno` from `open` or `read` (`ENOENT`, `EACCES`, `EISDIR`, …).
    public static func read(_ path: String) throws(Errno) -> [UInt8] {
        let fd: FileDescriptor
        do { fd = try FileDescriptor.open(FilePath(path), .readOnly, options: [.closeOnExec]) } catch {
            throw error as? Errno ?? .ioError
        }
        defer { try? fd.close() }
        var result: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 << 10)
        while true {
            let count: Int
            do { count = try chunk.withUnsafeMutableBytes { try fd.read(into: $0, retryOnInterrupt: true) } } catch {
                throw error as? Errno ?? .ioError
            }
            if count == 0 { return result }
            result.append(contentsOf: chunk[..<count])
        }
    }
}
