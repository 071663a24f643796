/// The two buffers the inner frames of a chain are decoded through: each frame is written into
/// one against the other, which holds its base, so decoding 24 frames of a 1 MiB file allocates
/// (and faults in) two buffers, once, instead of 24 MiB each time.
///
/// Kept between reads up to `keptBytes` together; larger ones are freed once the read is done.
/// Not thread-safe: one owner (the store) uses it.
final class ChainBuffers {
    /// The bytes both buffers may keep between reads.
    let keptBytes: Int
    private var buffers: [UnsafeMutableRawBufferPointer] = [.init(start: nil, count: 0), .init(start: nil, count: 0)]

    init(keptBytes: Int) {
        self.keptBytes = keptBytes
    }

    deinit {
        release()
    }

    /// Buffer `index` (0 or 1), at least `count` bytes long; its old bytes are not kept. The other
    /// buffer is left as it is.
    func buffer(_ index: Int, holding count: Int) -> UnsafeMutableRawBufferPointer {
        if buffers[index].count < count {
            buffers[index].deallocate()
            // Not zeroed: whoever asks writes it before reading it.
            buffers[index] = .allocate(byteCount: count, alignment: 16)
        }
        return buffers[index]
    }

    /// Frees the buffers when they are larger than `keptBytes` together: a read of one large
    /// file does not hold its size for good.
    func trim() {
        if buffers[0].count + buffers[1].count > keptBytes { release() }
    }

    /// The bytes the buffers hold now.
    var bytes: Int { buffers[0].count + buffers[1].count }

    private func release() {
        for index in buffers.indices {
            buffers[index].deallocate()
            buffers[index] = .init(start: nil, count: 0)
        }
    }
}
