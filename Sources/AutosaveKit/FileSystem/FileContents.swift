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
        return try read(descriptor: fd)
    }

    /// Reads `descriptor` to its end (a file, a pipe, standard input).
    ///
    /// - Throws: `Errno` from `read`.
    public static func read(descriptor fd: FileDescriptor) throws(Errno) -> [UInt8] {
        var result: [UInt8] = []
        // A file says how large it is: read straight into an array of that size.
        if let file = Fingerprint.of(descriptor: fd.rawValue), file.isRegularFile, file.size > 0 {
            result = try readDirectly(fd, expected: Int(file.size))
        }
        var chunk = [UInt8](repeating: 0, count: 256 << 10)
        while true {
            let count: Int
            do { count = try chunk.withUnsafeMutableBytes { try fd.read(into: $0, retryOnInterrupt: true) } } catch {
                throw error as? Errno ?? .ioError
            }
            if count == 0 { return result }
            result.append(contentsOf: chunk[..<count])
        }
    }

    /// Up to `expected` bytes read into the array's own storage; the caller reads on for a file
    /// that grew meanwhile.
    private static func readDirectly(_ fd: FileDescriptor, expected: Int) throws(Errno) -> [UInt8] {
        var failure: Errno?
        let bytes = [UInt8](unsafeUninitializedCapacity: expected) { storage, initialized in
            while initialized < expected {
                do {
                    let count = try fd.read(into: UnsafeMutableRawBufferPointer(UnsafeMutableBufferPointer(rebasing: storage[initialized...])), retryOnInterrupt: true)
                    if count == 0 { break }
                    initialized += count
                } catch {
                    failure = error as? Errno ?? .ioError
                    break
                }
            }
        }
        if let failure { throw failure }
        return bytes
    }
}
