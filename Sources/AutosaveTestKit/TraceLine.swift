import Foundation

/// Appends a line to `$AUTOSAVE_TRACE_FILE` when it is set: a trace that survives a hung test.
public func traceLine(_ message: String) {
    guard let path = ProcessInfo.processInfo.environment["AUTOSAVE_TRACE_FILE"] else { return }
    let fd = open(path, O_WRONLY | O_CREAT | O_APPEND, 0o644)
    guard fd >= 0 else { return }
    let bytes = Array((message + "\n").utf8)
    _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
    close(fd)
}
