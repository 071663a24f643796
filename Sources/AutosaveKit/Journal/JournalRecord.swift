import Foundation

/// One accepted edit as the journal keeps it, or the news that a revision reached the disk.
public struct JournalRecord: Sendable, Equatable {
    /// What the record says.
    public enum Kind: UInt8, Sendable {
        /// The buffer's content became `content` at `revision`.
        case write = 1
        /// The buffer deletes its file at `revision`.
        case delete = 2
        /// Everything up to `revision` of `path` is on disk: older records are obsolete.
        case saved = 3
    }

    public var kind: Kind
    public var path: String
    public var revision: Int
    public var changeID: UUID?
    public var content: [UInt8]
    /// `ContentDigest` of the disk version the edit was made on; nil when the file did not exist.
    /// After a crash it tells whether the file changed while the agent was down.
    public var baseDigest: UInt64?

    public init(
        kind: Kind, path: String, revision: Int, changeID: UUID? = nil, content: [UInt8] = [], baseDigest: UInt64? = nil
    ) {
        self.kind = kind
        self.path = path
        self.revision = revision
        self.changeID = changeID
        self.content = content
        self.baseDigest = baseDigest
    }
}

/// A 64-bit FNV-1a digest of a file's bytes, to recognise a version without keeping it.
public enum ContentDigest {
    public static func of(_ bytes: [UInt8]) -> UInt64 {
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        for byte in bytes {
            hash ^= UInt64(byte)
            hash &*= 0x0000_0100_0000_01B3
        }
        return hash ^ UInt64(bytes.count)
    }
}

/// The journal's on-disk framing: every record checksummed, so a torn tail is recognised.
///
/// A segment starts with an 8-byte header, `ASJ1` and the format version (UInt32, little
/// endian). Each record is `length: UInt32 | crc32: UInt32 | payload`, and the payload is
/// `kind: UInt8 | revision: UInt64 | changeID: 16 bytes (zero when none) | hasBase: UInt8 |
/// baseDigest: UInt64 | pathLength: UInt32 | path | content`. All integers little endian.
enum JournalFormat {
    static let magic: [UInt8] = Array("ASJ1".utf8)
    static let version: UInt32 = 1
    static let headerSize = 8
    /// The largest record the reader accepts; anything larger is corruption, not data.
    static let maximumRecordSize = 1 << 34

    /// Bytes of a payload before the path.
    static let fixedPayload = 38

    static func header() -> [UInt8] { magic + le(version) }

    static func encode(_ record: JournalRecord) -> [UInt8] {
        var payload: [UInt8] = [record.kind.rawValue]
        payload += le(UInt64(record.revision))
        if let id = record.changeID {
            payload += withUnsafeBytes(of: id.uuid) { Array($0) }
        } else {
            payload += [UInt8](repeating: 0, count: 16)
        }
        payload.append(record.baseDigest == nil ? 0 : 1)
        payload += le(record.baseDigest ?? 0)
        let path = Array(record.path.utf8)
        payload += le(UInt32(path.count))
        payload += path
        payload += record.content
        return le(UInt32(payload.count)) + le(CRC32.checksum(payload)) + payload
    }

    /// Decodes the records of one segment; stops at the first torn or corrupt record.
    ///
    /// - Returns: the records and how many bytes were valid (the rest is a torn tail).
    static func decode(_ bytes: [UInt8]) -> (records: [JournalRecord], validBytes: Int) {
        var records: [JournalRecord] = []
        var offset = headerSize
        while bytes.count - offset >= 8 {
            let length = Int(readLE32(bytes, offset))
            let checksum = readLE32(bytes, offset + 4)
            guard length >= fixedPayload, length <= maximumRecordSize, bytes.count - offset - 8 >= length else { break }
            let payload = Array(bytes[(offset + 8)..<(offset + 8 + length)])
            guard CRC32.checksum(payload) == checksum, let record = decodePayload(payload) else { break }
            records.append(record)
            offset += 8 + length
        }
        return (records, offset)
    }

    private static func decodePayload(_ payload: [UInt8]) -> JournalRecord? {
        guard let kind = JournalRecord.Kind(rawValue: payload[0]) else { return nil }
        let revision = Int(truncatingIfNeeded: readLE64(payload, 1))
        let idBytes = Array(payload[9..<25])
        var changeID: UUID?
        if idBytes.contains(where: { $0 != 0 }) {
            changeID = idBytes.withUnsafeBytes { UUID(uuid: $0.loadUnaligned(as: uuid_t.self)) }
        }
        let baseDigest = payload[25] == 0 ? nil : readLE64(payload, 26)
        let pathLength = Int(readLE32(payload, 34))
        guard payload.count - fixedPayload >= pathLength else { return nil }
        guard let path = String(validating: payload[fixedPayload..<(fixedPayload + pathLength)], as: UTF8.self) else {
            return nil
        }
        let content = Array(payload[(fixedPayload + pathLength)...])
        return JournalRecord(
            kind: kind, path: path, revision: revision, changeID: changeID, content: content, baseDigest: baseDigest)
    }

    static func le(_ value: UInt32) -> [UInt8] { withUnsafeBytes(of: value.littleEndian) { Array($0) } }
    static func le(_ value: UInt64) -> [UInt8] { withUnsafeBytes(of: value.littleEndian) { Array($0) } }

    static func readLE32(_ bytes: [UInt8], _ offset: Int) -> UInt32 {
        (0..<4).reduce(UInt32(0)) { $0 | UInt32(bytes[offset + $1]) << (8 * UInt32($1)) }
    }

    static func readLE64(_ bytes: [UInt8], _ offset: Int) -> UInt64 {
        (0..<8).reduce(UInt64(0)) { $0 | UInt64(bytes[offset + $1]) << (8 * UInt64($1)) }
    }
}

/// CRC-32 (IEEE 802.3), the checksum of every journal record.
enum CRC32 {
    /// Slicing by 8: entry `k * 256 + b` is the CRC of byte `b` followed by `k` zero bytes, so
    /// eight bytes are folded per step (byte at a time, the checksum was a seventh of the agent's
    /// time on a 50 MB write).
    private static let table: [UInt32] = {
        var table = [UInt32](repeating: 0, count: 8 * 256)
        for index in 0..<256 {
            var value = UInt32(index)
            for _ in 0..<8 { value = value & 1 == 1 ? 0xEDB8_8320 ^ (value >> 1) : value >> 1 }
            table[index] = value
        }
        for k in 1..<8 {
            for index in 0..<256 {
                let previous = table[(k - 1) * 256 + index]
                table[k * 256 + index] = (previous >> 8) ^ table[Int(previous & 0xFF)]
            }
        }
        return table
    }()

    static func checksum(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        table.withUnsafeBufferPointer { t in
            bytes.withUnsafeBufferPointer { input in
                var offset = 0
                while offset + 8 <= input.count {
                    let low = crc ^ (UInt32(input[offset]) | UInt32(input[offset + 1]) << 8
                        | UInt32(input[offset + 2]) << 16 | UInt32(input[offset + 3]) << 24)
                    crc = t[7 * 256 + Int(low & 0xFF)] ^ t[6 * 256 + Int((low >> 8) & 0xFF)]
                        ^ t[5 * 256 + Int((low >> 16) & 0xFF)] ^ t[4 * 256 + Int(low >> 24)]
                        ^ t[3 * 256 + Int(input[offset + 4])] ^ t[2 * 256 + Int(input[offset + 5])]
                        ^ t[256 + Int(input[offset + 6])] ^ t[Int(input[offset + 7])]
                    offset += 8
                }
                while offset < input.count {
                    crc = t[Int((crc ^ UInt32(input[offset])) & 0xFF)] ^ (crc >> 8)
                    offset += 1
                }
            }
        }
        return crc ^ 0xFFFF_FFFF
    }
}
