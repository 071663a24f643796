/// The 64-bit digest history keeps of every content: FNV-1a over the bytes, then mixed with the length.
///
/// The same function as AutosaveKit's `ContentDigest` (which this module cannot import), so a
/// version's `digest` can be compared with the digest the agent keeps of a file on disk. It only
/// finds candidates: contents are shared after their bytes compare equal, never on the digest alone.
public enum ContentHash {
    /// The digest of `bytes`.
    public static func of(_ bytes: [UInt8]) -> UInt64 {
        bytes.withUnsafeBufferPointer { of($0) }
    }

    /// The digest of `bytes`.
    public static func of(_ bytes: UnsafeBufferPointer<UInt8>) -> UInt64 {
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        for byte in bytes {
            hash ^= UInt64(byte)
            hash &*= 0x0000_0100_0000_01B3
        }
        return hash ^ UInt64(bytes.count)
    }
}
