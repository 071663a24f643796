import Glibc

/// Where a path leads as the kernel resolves it: every symbolic link followed, a relative one
/// against the folder that holds it, `..` taken after the link it follows.
///
/// This is the agent's one resolver for the paths clients name (the CLI sends them unresolved):
/// `realpath(3)` for the part that exists, the rest appended with `.` and `..` applied, since a
/// folder that does not exist yet can hold no link.
enum PhysicalPath {
    /// The physical form of `absolute`; nil only when not even `/` could be resolved.
    static func of(_ absolute: String) -> String? {
        var head = absolute
        var missing: [Substring] = []
        while true {
            if let real = realpath(head, nil) {
                defer { free(real) }
                var parts = String(cString: real).split(separator: "/").map(String.init)
                for part in missing.reversed() {
                    switch part {
                    case ".": continue
                    case "..": if !parts.isEmpty { parts.removeLast() }
                    default: parts.append(String(part))
                    }
                }
                return "/" + parts.joined(separator: "/")
            }
            guard head != "/", let slash = head.lastIndex(of: "/") else { return nil }
            let name = head[head.index(after: slash)...]
            if !name.isEmpty { missing.append(name) }
            head = slash == head.startIndex ? "/" : String(head[..<slash])
        }
    }
}
