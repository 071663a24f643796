import Glibc

/// Memory that is about to receive megabytes of content.
enum LargeMemory {
    /// Asks the kernel to back `region` with huge pages where it can: one fault per 2 MiB
    /// instead of one per 4 KiB. In a virtual machine a fault costs microseconds, and filling a
    /// fresh 50 MB buffer took longer than copying into it. Only the 2 MiB-aligned middle is
    /// advised; a kernel without transparent huge pages ignores the advice.
    static func adviseHugePages(_ region: UnsafeMutableRawBufferPointer) {
        let huge = 2 << 20
        guard let base = region.baseAddress, region.count >= 2 * huge else { return }
        let start = (Int(bitPattern: base) + huge - 1) & ~(huge - 1)
        let end = (Int(bitPattern: base) + region.count) & ~(huge - 1)
        guard end > start, let aligned = UnsafeMutableRawPointer(bitPattern: start) else { return }
        _ = madvise(aligned, end - start, MADV_HUGEPAGE)
    }
}
