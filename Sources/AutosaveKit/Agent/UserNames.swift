import Glibc

/// Users as messages name them: `user alice` from the password database, else `uid 1234`.
public enum UserNames {
    /// The user with `uid`, for a message: `user alice`, or `uid 1234` when the password
    /// database has no name for it. Never fails.
    public static func describe(_ uid: uid_t) -> String {
        name(of: uid).map { "user \($0)" } ?? "uid \(uid)"
    }

    /// The login name of `uid`, if the password database (`getpwuid_r`) has one.
    public static func name(of uid: uid_t) -> String? {
        var entry = passwd()
        var found: UnsafeMutablePointer<passwd>?
        var buffer = [CChar](repeating: 0, count: 4096)
        guard getpwuid_r(uid, &entry, &buffer, buffer.count, &found) == 0, found != nil, let name = entry.pw_name else {
            return nil
        }
        return String(cString: name)
    }
}
