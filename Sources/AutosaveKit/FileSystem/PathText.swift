import SystemPackage

/// Path arithmetic on strings, done lexically (no file system access), where NSString's path
/// methods were used: the binary imports FoundationEssentials only, since NSString brings
/// CoreFoundation and ICU with it (megabytes of start-up memory in every process).
public enum PathText {
    /// The folder part: `/a/b` → `/a`, `/a` → `/`, `b` → `""`.
    public static func parent(of path: String) -> String {
        FilePath(path).removingLastComponent().string
    }

    /// The last component: `/a/b` → `b`, `/` → `""`.
    public static func lastComponent(of path: String) -> String {
        FilePath(path).lastComponent?.string ?? ""
    }

    /// `.` and empty components dropped, `..` taken back against the component before it
    /// (above the root it stays the root); symbolic links are not followed.
    public static func normalized(_ path: String) -> String {
        FilePath(path).lexicallyNormalized().string
    }
}
