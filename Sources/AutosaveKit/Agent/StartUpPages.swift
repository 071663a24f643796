import CAutosaveShims
import Glibc

/// Gives back the memory of the code only start-up ran, once the agent is ready.
///
/// Start-up (argument parsing, the configuration, the first scan of the tree, the socket) runs
/// code scattered through the binary, and the kernel maps up to 64 KiB of the executable around
/// every page it faults in: about 12 MB of an idle agent's 19 MB were such pages. They are the
/// executable's own, read-only and never written, so `madvise(MADV_PAGEOUT)` drops them from the
/// resident set (and from memory, where nothing else maps them) at no risk; what runs later
/// faults back in, from the page cache or from disk. Best effort: without `/proc` or Linux 5.4's
/// `MADV_PAGEOUT` nothing changes.
///
/// Start-up's heap goes too: the first scan's listings and the probe threads' arenas are freed by
/// then but stay resident, scattered between live data, until `malloc_trim` hands their pages
/// back (11 MB of 106 MB on a million files).
enum StartUpPages {
    /// Reclaims the resident pages of the executable's read-only mappings and the heap's free
    /// pages; returns how many bytes of mappings were advised.
    @discardableResult
    static func giveBack() -> Int {
        defer { _ = CAutosaveShims_trimHeap() }
        guard let executable = Self.executablePath(), let maps = try? FileContents.read("/proc/self/maps") else { return 0 }
        var advised = 0
        for line in maps.split(separator: UInt8(ascii: "\n")) {
            // start-end perms offset dev inode path
            let fields = line.split(separator: UInt8(ascii: " "), maxSplits: 5, omittingEmptySubsequences: true)
            guard fields.count == 6, !fields[1].contains(UInt8(ascii: "w")),
                String(decoding: fields[5], as: UTF8.self).trimmingWhitespace() == executable
            else { continue }
            let bounds = fields[0].split(separator: UInt8(ascii: "-"))
            guard bounds.count == 2,
                let start = UInt(String(decoding: bounds[0], as: UTF8.self), radix: 16),
                let end = UInt(String(decoding: bounds[1], as: UTF8.self), radix: 16), end > start,
                let address = UnsafeMutableRawPointer(bitPattern: start)
            else { continue }
            if madvise(address, Int(end - start), Self.pageOut) == 0 { advised += Int(end - start) }
        }
        return advised
    }

    /// `MADV_PAGEOUT` (Linux 5.4), which Glibc's Swift module may not name.
    private static let pageOut: CInt = 21

    private static func executablePath() -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard count > 0 else { return nil }
        return String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
