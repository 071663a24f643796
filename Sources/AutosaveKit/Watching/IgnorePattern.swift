/// One `.gitignore` pattern, compiled for matching relative paths.
///
/// Semantics follow gitignore(5): a pattern with a slash at the start or in the middle is
/// anchored to the root, otherwise it matches a name at any depth; a trailing slash matches
/// directories only; `*` and `?` stop at `/`, `**` spans directories; `!` re-includes; a
/// backslash escapes the next character.
public struct IgnorePattern: Sendable, Equatable {
    /// The text as written in the configuration.
    public let source: String
    public let isNegated: Bool
    public let isDirectoryOnly: Bool
    /// Matched against the whole relative path; otherwise against the last component only.
    public let isAnchored: Bool
    private let segments: [[UInt8]]
    /// Bytes a matching name must start and end with, when the pattern's last segment says so
    /// literally (the name is what it matches): most names fail on one of them, so the full match
    /// runs for few (a scan asks for every entry).
    let requiredFirst: UInt8?
    let requiredLast: UInt8?

    /// Compiles a pattern; nil for lines that match nothing (blank, or `#` comments).
    public init?(_ source: String) {
        self.source = source
        var text = Array(source.utf8)
        while let last = text.last, last == UInt8(ascii: " "), !(text.count >= 2 && text[text.count - 2] == UInt8(ascii: "\\")) {
            text.removeLast()
        }
        guard let first = text.first, first != UInt8(ascii: "#") else { return nil }
        var negated = false
        if first == UInt8(ascii: "!") {
            negated = true
            text.removeFirst()
        }
        var directoryOnly = false
        if text.last == UInt8(ascii: "/") {
            directoryOnly = true
            text.removeLast()
        }
        var anchored = false
        if text.first == UInt8(ascii: "/") {
            anchored = true
            text.removeFirst()
        }
        guard !text.isEmpty else { return nil }
        if text.contains(UInt8(ascii: "/")) { anchored = true }
        isNegated = negated
        isDirectoryOnly = directoryOnly
        isAnchored = anchored
        segments = text.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: true).map(Array.init)
        let special: Set<UInt8> = [UInt8(ascii: "*"), UInt8(ascii: "?"), UInt8(ascii: "["), UInt8(ascii: "]"), UInt8(ascii: "\\")]
        let name = segments.last ?? []
        requiredFirst = name.first.flatMap { special.contains($0) ? nil : $0 }
        let escapedLast = name.count >= 2 && name[name.count - 2] == UInt8(ascii: "\\")
        requiredLast = escapedLast ? nil : name.last.flatMap { special.contains($0) ? nil : $0 }
    }

    /// Why `source` cannot be used as a pattern, or nil when it can.
    public static func problem(in source: String) -> String? {
        let bytes = Array(source.utf8)
        if bytes.contains(0) { return "a pattern cannot contain a NUL character" }
        var index = 0
        while index < bytes.count {
            switch bytes[index] {
            case UInt8(ascii: "\\"): index += 2
            case UInt8(ascii: "["):
                guard Self.classEnd(bytes[...], from: index) != nil else { return "unclosed `[` character class" }
                index += 1
            default: index += 1
            }
        }
        let trimmed = source.trimmingSpaces
        if trimmed == "!" || trimmed == "/" || trimmed == "!/" { return "the pattern matches nothing" }
        return nil
    }

    /// Whether the pattern matches `path`; only anchored patterns look past the last component.
    func matches(_ path: inout MatchedPath, isDirectory: Bool) -> Bool {
        if isDirectoryOnly && !isDirectory { return false }
        if let requiredFirst, path.firstByte != requiredFirst { return false }
        if let requiredLast, path.lastByte != requiredLast { return false }
        if !isAnchored { return Self.matchSegment(segments[0][...], path.name) }
        return Self.matchSegments(segments[...], path.components[...])
    }

    // MARK: - Matching

    private static func matchSegments(_ pattern: ArraySlice<[UInt8]>, _ path: ArraySlice<ArraySlice<UInt8>>) -> Bool {
        guard let head = pattern.first else { return path.isEmpty }
        if head == [UInt8(ascii: "*"), UInt8(ascii: "*")] {
            let rest = pattern.dropFirst()
            // A trailing `**` matches everything inside, at least one component.
            if rest.isEmpty { return !path.isEmpty }
            var remaining = path
            while true {
                if matchSegments(rest, remaining) { return true }
                guard !remaining.isEmpty else { return false }
                remaining = remaining.dropFirst()
            }
        }
        guard let component = path.first, matchSegment(head[...], component) else { return false }
        return matchSegments(pattern.dropFirst(), path.dropFirst())
    }

    /// fnmatch for one component: `*`, `?`, `[...]` and `\` escapes.
    private static func matchSegment(_ pattern: ArraySlice<UInt8>, _ text: ArraySlice<UInt8>) -> Bool {
        var p = pattern.startIndex
        var t = text.startIndex
        var starP: Int?
        var starT = t
        while t < text.endIndex {
            if p < pattern.endIndex {
                let byte = pattern[p]
                if byte == UInt8(ascii: "*") {
                    starP = p
                    starT = t
                    p += 1
                    continue
                }
                if byte == UInt8(ascii: "?") {
                    p += 1
                    t += 1
                    continue
                }
                if byte == UInt8(ascii: "["), let end = classEnd(pattern, from: p) {
                    if classMatches(pattern[(p + 1)..<end], text[t]) {
                        p = end + 1
                        t += 1
                        continue
                    }
                } else {
                    var literal = byte
                    var width = 1
                    if byte == UInt8(ascii: "\\"), p + 1 < pattern.endIndex {
                        literal = pattern[p + 1]
                        width = 2
                    }
                    if literal == text[t] {
                        p += width
                        t += 1
                        continue
                    }
                }
            }
            guard let star = starP else { return false }
            p = star + 1
            starT += 1
            t = starT
        }
        while p < pattern.endIndex && pattern[p] == UInt8(ascii: "*") { p += 1 }
        return p == pattern.endIndex
    }

    /// The index of the `]` that closes the class opened at `start`.
    private static func classEnd(_ pattern: ArraySlice<UInt8>, from start: Int) -> Int? {
        var index = start + 1
        if index < pattern.endIndex && (pattern[index] == UInt8(ascii: "!") || pattern[index] == UInt8(ascii: "^")) { index += 1 }
        if index < pattern.endIndex && pattern[index] == UInt8(ascii: "]") { index += 1 }
        while index < pattern.endIndex {
            if pattern[index] == UInt8(ascii: "]") { return index }
            index += 1
        }
        return nil
    }

    private static func classMatches(_ body: ArraySlice<UInt8>, _ byte: UInt8) -> Bool {
        var items = body
        var negated = false
        if let first = items.first, first == UInt8(ascii: "!") || first == UInt8(ascii: "^") {
            negated = true
            items = items.dropFirst()
        }
        var found = false
        var index = items.startIndex
        while index < items.endIndex {
            let low = items[index]
            if index + 2 < items.endIndex && items[index + 1] == UInt8(ascii: "-") {
                if low <= byte && byte <= items[index + 2] { found = true }
                index += 3
            } else {
                if low == byte { found = true }
                index += 1
            }
        }
        return found != negated
    }
}

extension String {
    fileprivate var trimmingSpaces: String {
        String(self.drop { $0 == " " }.reversed().drop { $0 == " " }.reversed())
    }
}

/// A relative path being matched, split into components only when an anchored pattern asks.
struct MatchedPath {
    private let text: String
    /// The name's first and last bytes, read without copying it: most patterns fail on one of
    /// them, and a scan asks about every entry of the tree.
    let firstByte: UInt8?
    let lastByte: UInt8?
    private let directory: String
    private var bytes: ArraySlice<UInt8>?
    private var split: [ArraySlice<UInt8>]?

    init(name: String, directory: String) {
        text = name
        firstByte = name.utf8.first
        lastByte = name.utf8.last
        self.directory = directory
    }

    var isEmpty: Bool { firstByte == nil }

    /// The name's bytes, copied the first time a pattern needs them all.
    var name: ArraySlice<UInt8> {
        mutating get {
            if let bytes { return bytes }
            let copied = Array(text.utf8)[...]
            bytes = copied
            return copied
        }
    }

    /// Every component, the name last.
    var components: [ArraySlice<UInt8>] {
        mutating get {
            if let split { return split }
            var parts = Array(directory.utf8).split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: true)
            parts.append(name)
            split = parts
            return parts
        }
    }
}
