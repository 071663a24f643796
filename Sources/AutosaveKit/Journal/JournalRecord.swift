import CZlib
import FoundationEssentials

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
        /// The buffer's content became revision `revision - 1`'s with `splices` applied.
        case edits = 4
        /// The buffer's content became the file it was clean on (pinned by `BasePins`, its
        /// digest `baseDigest`) with `splices` applied: a chain's first record.
        case baseEdits = 5
        /// Edits with these change ids (`content`: 16 bytes each) were applied to `path`'s
        /// buffers: kept across saves and restarts so that a retry is still applied once.
        case changeIDs = 6
        /// A save of `path` is about to write revision `revision`, whose `ContentDigest` is
        /// `baseDigest`: after a crash, the file may hold that version (`SavesBegun`).
        case saving = 7

        /// Whether the record holds splices rather than a content.
        var isSplices: Bool { self == .edits || self == .baseEdits }
    }

    public var kind: Kind
    public var path: String
    public var revision: Int
    public var changeID: UUID?
    /// The content a `.write` gives the buffer (or an `.edits` record's encoded splices): a
    /// rope, so that handing a buffer's text to the journal costs nothing until it is written.
    public var text: TextRope
    /// `text` as bytes, in one copy.
    public var content: [UInt8] {
        get { text.bytes }
        set { text = TextRope(newValue) }
    }
    /// `ContentDigest` of the disk version the edit was made on; nil when the file did not exist.
    /// After a crash it tells whether the file changed while the agent was down.
    public var baseDigest: UInt64?
    /// For `.edits`: the splices of the previous revision's content that make this one. On a
    /// `.write` handed to the journal: the same splices, so it may record just them.
    public var splices: [ByteSplice]?
    /// For `.edits`: the content's length once the splices are applied, checked on recovery.
    public var resultLength: Int?
    /// Which buffer made the record (never written to disk): splices are kept as splices only
    /// on top of a record of the same buffer, not of one a rename replaced at the same path.
    public var source: UUID?
    /// On a `.write` handed to the journal: the file the buffer was clean on before this edit,
    /// which the journal may pin and record the splices against (never written to disk).
    public var editedBase: EditedBase?
    /// On a record recovery gives back: the versions saves of its buffer were about to write
    /// since its records were last obsolete (`.saving` records). The file may hold any of them.
    /// One of an earlier revision than the record's is as much the edits' base as `baseDigest`
    /// (they were taken while it was written); one of the record's revision or later already
    /// holds the edits (a merged revision, never journaled, saved with them in it).
    public var savesBegun: [SavesBegun.Save] = []

    public init(
        kind: Kind, path: String, revision: Int, changeID: UUID? = nil, content: [UInt8] = [], baseDigest: UInt64? = nil
    ) {
        self.kind = kind
        self.path = path
        self.revision = revision
        self.changeID = changeID
        self.text = TextRope(content)
        self.baseDigest = baseDigest
    }

    public init(kind: Kind, path: String, revision: Int, changeID: UUID? = nil, text: TextRope, baseDigest: UInt64? = nil) {
        self.kind = kind
        self.path = path
        self.revision = revision
        self.changeID = changeID
        self.text = text
        self.baseDigest = baseDigest
    }

    /// A `.changeIDs` record of `ids`, applied to `path`'s buffers.
    static func changeIDs(_ ids: [UUID], of path: String) -> JournalRecord {
        JournalRecord(kind: .changeIDs, path: path, revision: 0, content: ids.flatMap { id in withUnsafeBytes(of: id.uuid) { Array($0) } })
    }

    /// The change ids a `.changeIDs` record holds.
    var ids: [UUID] {
        let bytes = content
        return stride(from: 0, to: bytes.count - 15, by: 16).map { offset in
            bytes[offset..<(offset + 16)].withUnsafeBytes { UUID(uuid: $0.loadUnaligned(as: uuid_t.self)) }
        }
    }

    /// This record as an `.edits` (or, on a pinned base, `.baseEdits`) record of its splices
    /// (the content is not kept).
    func asEdits(_ splices: [ByteSplice], onBase: Bool = false) -> JournalRecord {
        var record = JournalRecord(
            kind: onBase ? .baseEdits : .edits, path: path, revision: revision, changeID: changeID, baseDigest: baseDigest)
        record.splices = splices
        record.resultLength = text.count
        record.content = JournalFormat.body(of: splices, resultLength: text.count)
        return record
    }
}

/// A 64-bit FNV-1a digest of a file's bytes, to recognise a version without keeping it.
public enum ContentDigest {
    public static func of(_ bytes: some Collection<UInt8>) -> UInt64 {
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
/// baseDigest: UInt64 | pathLength: UInt32 | path | content`. For `.edits` and `.baseEdits`
/// the content is `resultLength: UInt64 | count: UInt32 | (start: UInt64 | end: UInt64 |
/// length: UInt32 | text)…`; for `.changeIDs`, 16 bytes per id; `.saving` has none. All integers
/// little endian. Version 2 added `.edits` and `.baseEdits`, version 3 `.changeIDs` and `.saving`:
/// an older agent refuses such a journal rather than taking its records for a torn tail.
enum JournalFormat {
    static let magic: [UInt8] = Array("ASJ1".utf8)
    static let version: UInt32 = 3
    static let headerSize = 8
    /// The largest record the reader accepts; anything larger is corruption, not data.
    static let maximumRecordSize = 1 << 34

    /// Bytes of a payload before the path.
    static let fixedPayload = 38

    static func header() -> [UInt8] { magic + le(version) }

    /// Whether `bytes` start with a whole header of some version of this format.
    static func hasWholeHeader(_ bytes: [UInt8]) -> Bool {
        bytes.count >= headerSize && Array(bytes[0..<magic.count]) == magic
    }

    /// Whether `bytes` are what a power cut leaves of a journal's first write, the header: a part
    /// of the header this agent writes, or a header of NULs (its size reached the disk before its
    /// bytes did), with anything after it. Nothing else that lacks a header is ours.
    static func isTornHeader(_ bytes: [UInt8]) -> Bool {
        if bytes.count < headerSize, bytes.elementsEqual(header().prefix(bytes.count)) { return true }
        return bytes.prefix(headerSize).allSatisfy { $0 == 0 }
    }

    /// The whole record: `head(of:)`, then the content.
    static func encode(_ record: JournalRecord) -> [UInt8] {
        head(of: record) + record.text.bytes
    }

    /// Everything of the record before its content: length, checksum and the fixed fields. The
    /// content is written after it as it is, so a 50 MB edit is not copied to be journaled.
    static func head(of record: JournalRecord) -> [UInt8] {
        let path = Array(record.path.utf8)
        var fields: [UInt8] = []
        fields.reserveCapacity(fixedPayload + path.count)
        fields.append(record.kind.rawValue)
        fields += le(UInt64(record.revision))
        if let id = record.changeID {
            fields += withUnsafeBytes(of: id.uuid) { Array($0) }
        } else {
            fields += [UInt8](repeating: 0, count: 16)
        }
        fields.append(record.baseDigest == nil ? 0 : 1)
        fields += le(record.baseDigest ?? 0)
        fields += le(UInt32(path.count))
        fields += path
        var checksum = CRC32.checksum(fields)
        record.text.forEachChunk { checksum = CRC32.checksum(UnsafeRawBufferPointer($0), continuing: checksum) }
        return le(UInt32(fields.count + record.text.count)) + le(checksum) + fields
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
        var record = JournalRecord(
            kind: kind, path: path, revision: revision, changeID: changeID, content: content, baseDigest: baseDigest)
        if kind == .changeIDs, content.count % 16 != 0 { return nil }
        if kind.isSplices {
            guard let (splices, resultLength) = splices(in: content) else { return nil }
            record.splices = splices
            record.resultLength = resultLength
            record.content = []
        }
        return record
    }

    /// The content of an `.edits` record.
    static func body(of splices: [ByteSplice], resultLength: Int) -> [UInt8] {
        var body = le(UInt64(resultLength)) + le(UInt32(splices.count))
        for splice in splices {
            body += le(UInt64(splice.start)) + le(UInt64(splice.end)) + le(UInt32(splice.text.count)) + splice.text
        }
        return body
    }

    /// The splices and result length an `.edits` record's content holds; nil when it is malformed.
    static func splices(in body: [UInt8]) -> ([ByteSplice], Int)? {
        guard body.count >= 12 else { return nil }
        let resultLength = readLE64(body, 0)
        let count = Int(readLE32(body, 8))
        var offset = 12
        var splices: [ByteSplice] = []
        for _ in 0..<count {
            guard body.count - offset >= 20 else { return nil }
            let start = readLE64(body, offset), end = readLE64(body, offset + 8)
            let length = Int(readLE32(body, offset + 16))
            offset += 20
            guard body.count - offset >= length, start <= UInt64(Int.max), end <= UInt64(Int.max) else { return nil }
            splices.append(ByteSplice(start: Int(start), end: Int(end), text: Array(body[offset..<(offset + length)])))
            offset += length
        }
        guard offset == body.count, resultLength <= UInt64(Int.max) else { return nil }
        return (splices, Int(resultLength))
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

/// CRC-32 (IEEE 802.3), the checksum of every journal record: zlib's, which folds several bytes
/// per step (50 MB in 19 ms here; a slicing-by-8 table loop in Swift took 50).
enum CRC32 {
    static func checksum(_ bytes: [UInt8]) -> UInt32 {
        bytes.withUnsafeBytes { checksum($0) }
    }

    /// The CRC of the bytes `previous` was the CRC of, followed by `bytes` (`previous` 0 for
    /// none): a record is checked in one pass over its parts, never joined.
    static func checksum(_ bytes: UnsafeRawBufferPointer, continuing previous: UInt32 = 0) -> UInt32 {
        var crc = UInt(previous)
        var rest = bytes[...]
        // zlib takes a 32-bit length; a record may be longer.
        while !rest.isEmpty {
            let part = rest.prefix(1 << 30)
            crc = crc32(crc, UnsafeRawBufferPointer(rebasing: part).bindMemory(to: Bytef.self).baseAddress, uInt(part.count))
            rest = rest.dropFirst(part.count)
        }
        return UInt32(truncatingIfNeeded: crc)
    }
}
