import Glibc
import SystemPackage

/// The one place where a raw system call's failure becomes a typed `Errno` and where `EINTR` is
/// retried, for the calls swift-system does not wrap (the `…at` calls on a folder's descriptor,
/// `renameat2`, `fchown`, `writev`, the extended-attribute calls, `F_SETLEASE`).
///
/// It follows swift-system's own model (`valueOrErrno(retryOnInterrupt:)`): a call that returns
/// -1 throws `Errno` from `errno`; one interrupted by a signal is made again unless the caller
/// says otherwise. Nothing else in AutosaveKit checks for `EINTR`.
enum SystemCall {
    /// Makes `call` until it is not interrupted, and returns what it returned.
    ///
    /// - Parameter retryOnInterrupt: false makes the call once: a failed `fsync` is never made
    ///   again, since the kernel may have dropped the pages it could not write.
    /// - Throws: the `Errno` of a call that returned -1 (never `.interrupted` when
    ///   `retryOnInterrupt` is true).
    static func value<Result: FixedWidthInteger>(retryOnInterrupt: Bool = true, _ call: () -> Result) throws(Errno) -> Result {
        while true {
            let result = call()
            if result != -1 { return result }
            let code = Errno(rawValue: errno)
            if retryOnInterrupt, code == .interrupted { continue }
            throw code
        }
    }

    /// `value`, for a call whose only answer is success or -1.
    ///
    /// - Throws: as `value`.
    static func check<Result: FixedWidthInteger>(retryOnInterrupt: Bool = true, _ call: () -> Result) throws(Errno) {
        _ = try value(retryOnInterrupt: retryOnInterrupt, call)
    }
}
