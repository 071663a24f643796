/// How a text ends its lines, so that text put into it ends its lines the same way.
///
/// `read_file` shows lines without their "\r": what a model writes into a file whose lines end
/// with "\r\n" has "\n" where the file has "\r\n", and a line break it adds must not be the only
/// bare "\n" in the file.
enum LineBreakStyle: Equatable {
    /// "\n"
    case lf
    /// "\r\n"
    case crlf

    /// The style most of `text`'s line breaks have; nil when it has none, or as many of each.
    static func of(_ text: [UInt8]) -> LineBreakStyle? {
        var crlf = 0
        var lf = 0
        var previous: UInt8 = 0
        for byte in text {
            if byte == UInt8(ascii: "\n") {
                if previous == UInt8(ascii: "\r") { crlf += 1 } else { lf += 1 }
            }
            previous = byte
        }
        return crlf > lf ? .crlf : lf > crlf ? .lf : nil
    }

    /// `text` with each line break ("\n" or "\r\n") spelled this way; a lone "\r" stays as it is.
    func spell(_ text: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(self == .crlf ? text.count + text.count / 16 : text.count)
        for (index, byte) in text.enumerated() {
            if byte == UInt8(ascii: "\r"), index + 1 < text.count, text[index + 1] == UInt8(ascii: "\n") { continue }
            if byte == UInt8(ascii: "\n"), self == .crlf { out.append(UInt8(ascii: "\r")) }
            out.append(byte)
        }
        return out
    }
}
