import CZstd

/// zstd compression of one content, optionally against a prefix: the previous version of the file.
///
/// With a prefix, zstd finds the new content's unchanged runs in the prefix and encodes them as
/// references to it (what `zstd --patch-from` does, with the same window and long-distance
/// matching), so a version that differs from the one before by a line compresses to about the
/// size of that line. Decompressing needs the very same prefix.
/// Every frame carries zstd's checksum of its content, so a damaged frame fails to decompress
/// instead of giving back other bytes.
enum Zstd {
    /// The largest window used: 128 MiB. A prefix is useful only as far as the window reaches, and
    /// the window must cover prefix and content together; history's files are a few MiB at most,
    /// and a larger window costs memory at both ends.
    static let maximumWindowLog: Int32 = 27
    /// Windows larger than 2^this use long-distance matching against a prefix.
    static let longDistanceWindowLog: Int32 = 16

    /// The compression and decompression contexts one owner reuses, so that each call does not
    /// allocate (and fault in) zstd's tables again. Not thread-safe: one owner uses it.
    final class Contexts {
        private let compression: OpaquePointer
        private let decompression: OpaquePointer

        /// - Throws: `HistoryError.compression` when zstd cannot allocate them.
        init() throws(HistoryError) {
            guard let compression = ZSTD_createCCtx() else {
                throw .compression(detail: "cannot allocate a compression context")
            }
            guard let decompression = ZSTD_createDCtx() else {
                ZSTD_freeCCtx(compression)
                throw .compression(detail: "cannot allocate a decompression context")
            }
            self.compression = compression
            self.decompression = decompression
        }

        deinit {
            ZSTD_freeCCtx(compression)
            ZSTD_freeDCtx(decompression)
        }

        /// One zstd frame of `bytes`, compressed against `prefix` when one is given.
        ///
        /// - Parameters:
        ///   - prefix: the content the frame may refer to; `decompress` needs the same bytes.
        ///   - level: zstd's compression level (3 is zstd's default: fast, and the prefix does the rest).
        /// - Throws: `HistoryError.compression` with zstd's message.
        func compress(_ bytes: [UInt8], prefix: [UInt8]?, level: Int32 = 3) throws(HistoryError) -> [UInt8] {
            let context = compression
            // Parameters stick to a context across frames: start each frame from zstd's defaults.
            ZSTD_CCtx_reset(context, ZSTD_reset_session_and_parameters)
            try Zstd.check(ZSTD_CCtx_setParameter(context, ZSTD_c_compressionLevel, level), "set the compression level")
            try Zstd.check(ZSTD_CCtx_setParameter(context, ZSTD_c_checksumFlag, 1), "ask for checksums")
            if let prefix, !prefix.isEmpty {
                // A reference reaches back across the whole prefix, so the window must span both.
                let windowLog = Zstd.windowLog(covering: prefix.count + bytes.count)
                try Zstd.check(
                    ZSTD_CCtx_setParameter(context, ZSTD_c_windowLog, windowLog), "set the window to 2^\(windowLog)")
                // The level's match finder keeps one position per hash bucket, too few for a large
                // prefix: after an edit it takes a while to find where the new content lines up
                // with the old again. Long-distance matching finds it sooner (one-line edits of a
                // 1 MiB text: 149 bytes a version with it, 175 to 198 without, for 0.6 ms more).
                // `zstd --patch-from` turns it on when the window outgrows the match finder's
                // chain: 2^16 at the low levels used here (the table that says so is behind
                // zstd's unstable API).
                if windowLog > Zstd.longDistanceWindowLog {
                    try Zstd.check(
                        ZSTD_CCtx_setParameter(context, ZSTD_c_enableLongDistanceMatching, 1),
                        "match across long distances")
                }
            }
            var output = [UInt8](repeating: 0, count: ZSTD_compressBound(bytes.count))
            let written = Zstd.run(
                bytes, into: &output, prefix: prefix,
                reference: { ZSTD_CCtx_refPrefix(context, $0.baseAddress, $0.count) }
            ) { source, target in
                ZSTD_compress2(context, target.baseAddress, target.count, source.baseAddress, source.count)
            }
            try Zstd.check(written, "compress \(bytes.count) bytes")
            output.removeSubrange(written...)
            return output
        }

        /// The `size` bytes the frame holds, decompressed against the `prefix` it was compressed with.
        ///
        /// - Parameters:
        ///   - prefix: the same bytes `compress` was given (nil or empty when it had none).
        ///   - size: the content's length, as recorded; a frame that decodes to any other length fails.
        /// - Throws: `HistoryError.compression` when the frame is damaged, does not match the prefix
        ///   or the size, or its checksum does not match.
        func decompress(_ frame: [UInt8], prefix: [UInt8]?, size: Int) throws(HistoryError) -> [UInt8] {
            try Zstd.withBytes(of: prefix) { (prefix: UnsafeRawBufferPointer?) throws(HistoryError) -> [UInt8] in
                try decompress(frame, prefix: prefix, size: size, checksum: true)
            }
        }

        /// The `size` bytes the frame holds, decompressed against `prefix` into a new array.
        ///
        /// - Parameter checksum: whether the frame's checksum is checked (see `decompress(_:prefix:into:size:checksum:)`).
        /// - Throws: `HistoryError.compression`, as `decompress(_:prefix:size:)`.
        func decompress(
            _ frame: [UInt8], prefix: UnsafeRawBufferPointer?, size: Int, checksum: Bool
        ) throws(HistoryError) -> [UInt8] {
            var failure: HistoryError?
            // Uninitialised: zstd writes every byte, and zeroing 1 MiB first cost as much as a delta's decoding.
            // One byte more than expected, so that a frame holding more than `size` is caught.
            let output = [UInt8](unsafeUninitializedCapacity: size + 1) { buffer, count in
                do throws(HistoryError) {
                    try decompress(frame, prefix: prefix, into: UnsafeMutableRawBufferPointer(buffer), size: size, checksum: checksum)
                    count = size
                } catch {
                    failure = error
                    count = 0
                }
            }
            if let failure { throw failure }
            return output
        }

        /// Decompresses the frame against `prefix` into the first `size` bytes of `output`, which
        /// holds at least `size + 1` (so that a frame holding more than `size` is caught).
        ///
        /// - Parameter checksum: whether the frame's checksum is checked. A frame inside a chain,
        ///   whose bytes only serve as the next frame's prefix, need not be: what it decodes to is
        ///   checked through the chain's last content (its checksum and its digest), and checking
        ///   1 MiB with XXH64 cost more than decoding a one-line delta. A library that refuses to
        ///   skip it checks it.
        /// - Throws: `HistoryError.compression` when the frame is damaged, does not match the prefix
        ///   or the size, or (when checked) its checksum does not match.
        func decompress(
            _ frame: [UInt8], prefix: UnsafeRawBufferPointer?, into output: UnsafeMutableRawBufferPointer, size: Int,
            checksum: Bool
        ) throws(HistoryError) {
            precondition(output.count > size, "room for one byte more than the content")
            let context = decompression
            ZSTD_DCtx_reset(context, ZSTD_reset_session_and_parameters)
            try Zstd.check(
                ZSTD_DCtx_setParameter(context, ZSTD_d_windowLogMax, Zstd.maximumWindowLog), "accept windows up to 2^27"
            )
            if !checksum {
                // ZSTD_d_forceIgnoreChecksum, a macro for this name, which Swift does not import.
                // An error here leaves the check on, which is only slower.
                _ = ZSTD_DCtx_setParameter(context, ZSTD_d_experimentalParam3, Int32(ZSTD_d_ignoreChecksum.rawValue))
            }
            if let prefix, prefix.count > 0 {
                try Zstd.check(ZSTD_DCtx_refPrefix(context, prefix.baseAddress, prefix.count), "refer to the prefix")
            }
            let written = frame.withUnsafeBytes { source in
                ZSTD_decompressDCtx(context, output.baseAddress, size + 1, source.baseAddress, source.count)
            }
            try Zstd.check(written, "decompress a frame of \(frame.count) bytes")
            guard written == size else {
                throw .compression(
                    detail: "a frame of \(frame.count) bytes holds \(written) bytes, not the \(size) recorded")
            }
        }
    }

    /// One zstd frame of `bytes`, compressed against `prefix` when one is given, with fresh contexts.
    ///
    /// - Throws: `HistoryError.compression`, as `Contexts.compress`.
    static func compress(_ bytes: [UInt8], prefix: [UInt8]?, level: Int32 = 3) throws(HistoryError) -> [UInt8] {
        try Contexts().compress(bytes, prefix: prefix, level: level)
    }

    /// The `size` bytes the frame holds, decompressed against `prefix`, with fresh contexts.
    ///
    /// - Throws: `HistoryError.compression`, as `Contexts.decompress`.
    static func decompress(_ frame: [UInt8], prefix: [UInt8]?, size: Int) throws(HistoryError) -> [UInt8] {
        try Contexts().decompress(frame, prefix: prefix, size: size)
    }

    /// The window's log2 that spans `count` bytes, between zstd's minimum and `maximumWindowLog`.
    static func windowLog(covering count: Int) -> Int32 {
        // zstd's smallest window, 2^10 (`ZSTD_WINDOWLOG_ABSOLUTEMIN`, behind its unstable API).
        var log: Int32 = 10
        while log < maximumWindowLog, 1 << log < count { log += 1 }
        return log
    }

    // MARK: - Helpers

    /// One zstd call from `input` into `output`, with `prefix` (unless nil or empty) handed to the
    /// context first by `reference`; both return zstd's result, a length or an error code.
    ///
    /// The prefix is referenced, not copied: its bytes must stay where they are until the frame is
    /// done, so the call runs inside the prefix's `withUnsafeBytes`. zstd forgets it after one frame.
    fileprivate static func run(
        _ input: [UInt8], into output: inout [UInt8], prefix: [UInt8]?,
        reference: (UnsafeRawBufferPointer) -> Int,
        _ call: (_ source: UnsafeRawBufferPointer, _ target: UnsafeMutableRawBufferPointer) -> Int
    ) -> Int {
        func run(referencing prefix: UnsafeRawBufferPointer?) -> Int {
            if let prefix {
                let result = reference(prefix)
                if ZSTD_isError(result) != 0 { return result }
            }
            return input.withUnsafeBytes { source in output.withUnsafeMutableBytes { target in call(source, target) } }
        }
        guard let prefix, !prefix.isEmpty else { return run(referencing: nil) }
        return prefix.withUnsafeBytes { run(referencing: $0) }
    }

    /// Runs `body` with `bytes`' storage (nil for nil), which stays where it is until `body` returns.
    static func withBytes<Result>(
        of bytes: [UInt8]?, _ body: (UnsafeRawBufferPointer?) throws(HistoryError) -> Result
    ) throws(HistoryError) -> Result {
        guard let bytes else { return try body(nil) }
        var outcome: Result?
        var failure: HistoryError?
        bytes.withUnsafeBytes { raw in
            do throws(HistoryError) { outcome = try body(raw) } catch { failure = error }
        }
        if let failure { throw failure }
        return outcome!
    }

    fileprivate static func check(_ result: Int, _ operation: String) throws(HistoryError) {
        guard ZSTD_isError(result) != 0 else { return }
        throw .compression(detail: "cannot \(operation): \(String(cString: ZSTD_getErrorName(result)))")
    }
}
