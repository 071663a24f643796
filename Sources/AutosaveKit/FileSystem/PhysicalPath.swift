import ByteNames
import Glibc

/// Where an absolute path leads as the kernel resolves it: every symbolic link followed, a
/// relative one against the folder that holds it, `..` taken after the link it follows.
///
/// Used only for an absolute path a client names that is not spelled below the root (the user's
/// own links outside the project, such as a home folder reached through a link): what lies inside
/// the root is then resolved again by `PathResolver`, which no link inside may lead astray.
/// `realpath(3)` for the part that exists, the rest appended with `.` and `..` applied, since a
/// folder that does not exist yet can hold no link. Components are split at `/` bytes.
enum PhysicalPath {
    /// The physical form of `absolute`; nil only when not even `/` could be resolved.
    static func of(_ absolute: String) -> String? {
        var head = absolute
        var missing: [String] = []
        while true {
            if let real = realpath(head, nil) {
                defer { free(real) }
                var parts = String(cString: real).pathComponents
                for part in missing.reversed() {
                    switch part {
                    case ".": continue
                    case "..": if !parts.isEmpty { parts.removeLast() }
                    default: parts.append(part)
                    }
                }
                return "/" + parts.joined(separator: "/")
            }
            guard !head.isSameName(as: "/"), head.isAbsolutePath else { return nil }
            let (folder, name) = head.folderAndName
            if !name.isEmpty { missing.append(name) }
            head = folder
        }
    }
}
