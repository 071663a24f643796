import AutosaveHistory

/// One version as `autosave history` prints it: id, local time and how long ago, who, kind,
/// size, lines added and removed (when known), path, two spaces between.
///
/// Written as bytes into the caller's buffer, which is written out whole: ten thousand lines
/// are one growing array, not ten thousand strings each joined from pieces.
public enum VersionLine {
    /// Appends the line of `version`, and its newline, to `text`; `now` (milliseconds since the
    /// epoch) is what "ago" counts back from.
    public static func append(_ version: Version, now: Int64, clock: inout LocalClock, to text: inout TextBytes) {
        func separator() { text.append(text: "  ") }
        text.appendDecimal(version.id)
        separator()
        clock.append(version.time, to: &text)
        text.append(text: " (")
        appendAgo(now - version.time, to: &text)
        text.append(UInt8(ascii: ")"))
        separator()
        text.append(utf8: version.who)
        if let program = version.program {
            text.append(text: " (")
            text.append(utf8: program)
            if let pid = version.pid {
                text.append(UInt8(ascii: " "))
                text.appendDecimal(Int64(pid))
            }
            text.append(UInt8(ascii: ")"))
        }
        separator()
        text.append(utf8: version.kind.rawValue)
        // A conflict copy's: the version its bytes came from.
        if let parent = version.parent {
            text.append(text: " of ")
            text.appendDecimal(parent)
        }
        if let from = version.from {
            text.append(text: " from ")
            text.append(utf8: from)
        }
        separator()
        if let size = version.size { appendSize(size, to: &text) } else { text.append(UInt8(ascii: "-")) }
        separator()
        // Lines added and removed against the version before; left out when unknown (a first
        // version, a removal, a binary, a version recorded before history counted them).
        if let added = version.added, let removed = version.removed {
            text.append(UInt8(ascii: "+"))
            text.appendDecimal(Int64(added))
            text.append(text: " -")
            text.appendDecimal(Int64(removed))
            separator()
        }
        text.append(utf8: version.path)
        text.append(UInt8(ascii: "\n"))
    }

    /// `just now`, `5 minutes ago`, `3 days ago`: the largest whole unit in `milliseconds`.
    static func appendAgo(_ milliseconds: Int64, to text: inout TextBytes) {
        let seconds = max(0, milliseconds / 1000)
        let (count, unit): (Int64, StaticString) =
            switch seconds {
            case 86_400...: (seconds / 86_400, "day")
            case 3600...: (seconds / 3600, "hour")
            case 60...: (seconds / 60, "minute")
            default: (seconds, "second")
            }
        guard count > 0 else {
            text.append(text: "just now")
            return
        }
        text.appendDecimal(count)
        text.append(UInt8(ascii: " "))
        text.append(text: unit)
        if count != 1 { text.append(UInt8(ascii: "s")) }
        text.append(text: " ago")
    }

    /// `2026-11-27 10:00:03`, in the local time zone.
    public static func localTime(_ milliseconds: Int64) -> String {
        var clock = LocalClock()
        var text = TextBytes()
        clock.append(milliseconds, to: &text)
        return String(decoding: text.bytes, as: UTF8.self)
    }

    /// `812 B`, `4.1 KiB`, `1.0 MiB`: one decimal, rounded half away from zero.
    static func appendSize(_ count: Int, to text: inout TextBytes) {
        guard count >= 1024 else {
            text.appendDecimal(Int64(count))
            text.append(text: " B")
            return
        }
        let kib = Double(count) / 1024
        let (tenths, unit): (Double, StaticString) = kib < 1024 ? ((kib * 10).rounded(), " KiB") : ((kib / 1024 * 10).rounded(), " MiB")
        let whole = Int64(tenths)
        text.appendDecimal(whole / 10)
        text.append(UInt8(ascii: "."))
        text.appendDecimal(whole % 10)
        text.append(text: unit)
    }
}
