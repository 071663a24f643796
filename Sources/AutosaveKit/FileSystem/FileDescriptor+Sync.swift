import Glibc
import SystemPackage

extension FileDescriptor {
    /// Flushes the file's data and metadata to the device.
    ///
    /// - Throws: `Errno` from `fsync` (`EIO` means the data may be lost: rewrite it, never retry).
    ///   The call is made once, even when interrupted.
    /// The corresponding C function is `fsync`.
    func sync() throws(Errno) {
        try SystemCall.check(retryOnInterrupt: false) { Glibc.fsync(rawValue) }
    }
}

extension FileDescriptor {
    /// Writes every byte of `text`, its chunks gathered into few `writev` calls rather than
    /// copied into one array first.
    ///
    /// - Throws: `Errno` from `writev`; part of the text may have been written.
    func writeAll(_ text: TextRope) throws(Errno) {
        var vectors: [iovec] = []
        vectors.reserveCapacity(Self.vectorsPerCall)
        var failure: Errno?
        // The chunks stay alive (the rope holds them) while their addresses are in `vectors`.
        text.forEachChunk { chunk in
            guard failure == nil, let base = chunk.baseAddress, !chunk.isEmpty else { return }
            vectors.append(iovec(iov_base: UnsafeMutableRawPointer(mutating: base), iov_len: chunk.count))
            if vectors.count == Self.vectorsPerCall {
                do throws(Errno) { try writeVectors(&vectors) } catch { failure = error }
            }
        }
        if let failure { throw failure }
        try writeVectors(&vectors)
    }

    /// How many chunks one `writev` takes (IOV_MAX on Linux).
    private static var vectorsPerCall: Int { 1024 }

    /// Writes all of `vectors` (resuming after short writes) and empties it.
    private func writeVectors(_ vectors: inout [iovec]) throws(Errno) {
        var first = 0
        while first < vectors.count {
            var remaining = try SystemCall.value {
                vectors[first...].withUnsafeBufferPointer { Glibc.writev(rawValue, $0.baseAddress, Int32($0.count)) }
            }
            while first < vectors.count, remaining >= vectors[first].iov_len {
                remaining -= vectors[first].iov_len
                first += 1
            }
            if remaining > 0 {
                vectors[first].iov_base += remaining
                vectors[first].iov_len -= remaining
            }
        }
        vectors.removeAll(keepingCapacity: true)
    }
}
