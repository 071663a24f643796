import Foundation

/// A tiny tmpfs mounted on a temp directory, so a test can fill a disk for real.
///
/// Mounting needs root (or a mount namespace); where it is not permitted, `make` returns nil
/// and the test says so instead of pretending.
public final class SmallFilesystem: Sendable {
    public let path: String
    private let directory: TemporaryDirectory

    /// Whether this process may mount a tmpfs.
    public static let isAvailable: Bool = {
        guard getuid() == 0, let probe = try? SmallFilesystem(bytes: 64 << 10) else { return false }
        _ = probe
        return true
    }()

    /// Mounts a tmpfs of `bytes` (rounded up to pages by the kernel).
    public init(bytes: Int) throws {
        directory = try TemporaryDirectory(prefix: "autosave-fs")
        path = directory.path
        let mount = Process()
        mount.executableURL = URL(fileURLWithPath: "/bin/mount")
        mount.arguments = ["-t", "tmpfs", "-o", "size=\(bytes),mode=0755", "tmpfs", path]
        mount.standardError = FileHandle.nullDevice
        try mount.run()
        mount.waitUntilExit()
        guard mount.terminationStatus == 0 else { throw CocoaError(.fileWriteNoPermission) }
    }

    /// Remounts it read-only, as a full or failing disk the kernel turned read-only would be.
    public func makeReadOnly() throws {
        let remount = Process()
        remount.executableURL = URL(fileURLWithPath: "/bin/mount")
        remount.arguments = ["-o", "remount,ro", path]
        try remount.run()
        remount.waitUntilExit()
        guard remount.terminationStatus == 0 else { throw CocoaError(.fileWriteNoPermission) }
    }

    deinit {
        let unmount = Process()
        unmount.executableURL = URL(fileURLWithPath: "/bin/umount")
        unmount.arguments = ["-l", path]
        try? unmount.run()
        unmount.waitUntilExit()
    }
}
