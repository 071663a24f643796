/// The most text one tool result holds, and how a longer one is cut: a model's context is finite,
/// and one result larger than a good part of it (a minified file's one line, a long list) pushes
/// out everything else the model was working from.
///
/// The bound is on the result's text (UTF-8), whatever the tool: `read_file` pages to stay within
/// it and says how to read on; any other result that would pass it is cut, saying how much was
/// left out.
enum ResultBound {
    /// 256 KiB.
    static let bytes = 256 * 1024
    /// The bound as messages name it.
    static let name = "256 KB"

    /// `text` when it fits in `bound` bytes; else its start, cut between characters, and a line
    /// saying how much was left out.
    static func cut(_ text: String, bound: Int = bytes) -> String {
        let utf8 = Array(text.utf8)
        guard utf8.count > bound else { return text }
        let reserve = 200
        let keep = characterStart(at: max(0, bound - reserve), in: utf8)
        return String(decoding: utf8[..<keep], as: UTF8.self)
            + "\n[cut: this result was \(utf8.count) bytes; a result holds at most \(name), so its last \(utf8.count - keep) bytes were left out]"
    }

    /// `offset`, or the start of the UTF-8 character it falls inside: text is never cut inside a
    /// character.
    static func characterStart<Bytes: Collection<UInt8>>(at offset: Bytes.Index, in bytes: Bytes) -> Bytes.Index {
        var offset = offset
        while offset > bytes.startIndex, offset < bytes.endIndex, bytes[offset] & 0xC0 == 0x80 { offset = bytes.index(offset, offsetBy: -1) }
        return offset
    }
}
