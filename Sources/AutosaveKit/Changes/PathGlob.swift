/// A glob in the Language Server Protocol's syntax, matched against paths relative to the root:
/// `*` any run of characters within one path segment, `?` one character, `**` any number of
/// whole segments (none included), `{a,b}` either alternative (they may hold `/` and nest),
/// `[abc]`, `[a-z]` and `[!a-z]` one character of (or not of) a set.
///
/// A folder's path (ending in `/`) is matched without its last `/`. Characters are Unicode
/// scalars, so `?` takes one accented letter, not one byte of it.
public struct PathGlob: Sendable, Hashable, CustomStringConvertible {
    /// The pattern as given.
    public let pattern: String
    /// The brace alternatives, expanded, each split into segments.
    private let alternatives: [[[Unicode.Scalar]]]

    /// How many alternatives braces may expand to: a pattern beyond it is refused, not slowly matched.
    public static var maxAlternatives: Int { 256 }

    /// - Throws: `PathGlobError` for an empty pattern, unbalanced braces or brackets, or one
    ///   whose braces expand to more than `maxAlternatives` patterns.
    public init(_ pattern: String) throws(PathGlobError) {
        guard !pattern.isEmpty else { throw PathGlobError(pattern: pattern, problem: "it is empty") }
        let expanded = try Self.expand(Array(pattern.unicodeScalars), pattern: pattern)
        self.pattern = pattern
        alternatives = expanded.map { scalars in
            let trimmed = scalars.first == "/" ? Array(scalars.dropFirst()) : scalars
            return trimmed.split(separator: "/", omittingEmptySubsequences: true).map(Array.init)
        }
        for alternative in alternatives {
            for segment in alternative where !Self.hasBalancedBrackets(segment) {
                throw PathGlobError(pattern: pattern, problem: "a `[` has no `]` in its path segment")
            }
        }
    }

    public var description: String { pattern }

    /// Whether `path` (relative to the root; a folder's may end in `/`) matches.
    public func matches(_ path: String) -> Bool {
        var text = path
        if text.hasSuffix("/") { text.removeLast() }
        let segments = Array(text.unicodeScalars).split(separator: "/", omittingEmptySubsequences: true).map(Array.init)
        return alternatives.contains { Self.match($0[...], segments[...]) }
    }

    private static func match(_ pattern: ArraySlice<[Unicode.Scalar]>, _ path: ArraySlice<[Unicode.Scalar]>) -> Bool {
        guard let first = pattern.first else { return path.isEmpty }
        if first == ["*", "*"] {
            let rest = pattern.dropFirst()
            var tail = path
            while true {
                if match(rest, tail) { return true }
                guard !tail.isEmpty else { return false }
                tail = tail.dropFirst()
            }
        }
        guard let segment = path.first, matchSegment(first[...], segment[...]) else { return false }
        return match(pattern.dropFirst(), path.dropFirst())
    }

    /// One segment: `*` (and a `**` inside a segment) any run, `?` one character, `[…]` a set.
    private static func matchSegment(_ pattern: ArraySlice<Unicode.Scalar>, _ name: ArraySlice<Unicode.Scalar>) -> Bool {
        var p = pattern.startIndex
        var n = name.startIndex
        var star: (p: Int, n: Int)?
        while n < name.endIndex {
            if p < pattern.endIndex {
                switch pattern[p] {
                case "*":
                    while p < pattern.endIndex, pattern[p] == "*" { p += 1 }
                    star = (p, n)
                    continue
                case "?":
                    p += 1
                    n += 1
                    continue
                case "[":
                    if let (isMember, next) = set(at: p, in: pattern, contains: name[n]), isMember {
                        p = next
                        n += 1
                        continue
                    }
                default:
                    if pattern[p] == name[n] {
                        p += 1
                        n += 1
                        continue
                    }
                }
            }
            guard let last = star else { return false }
            star = (last.p, last.n + 1)
            p = last.p
            n = last.n + 1
        }
        while p < pattern.endIndex, pattern[p] == "*" { p += 1 }
        return p == pattern.endIndex
    }

    /// The set `[…]` starting at `start`: whether it holds `character`, and the index after it.
    private static func set(
        at start: Int, in pattern: ArraySlice<Unicode.Scalar>, contains character: Unicode.Scalar
    ) -> (Bool, Int)? {
        var index = start + 1
        let isNegated = index < pattern.endIndex && (pattern[index] == "!" || pattern[index] == "^")
        if isNegated { index += 1 }
        var isMember = false
        var isFirst = true
        while index < pattern.endIndex, pattern[index] != "]" || isFirst {
            isFirst = false
            let low = pattern[index]
            if index + 2 < pattern.endIndex, pattern[index + 1] == "-", pattern[index + 2] != "]" {
                if low.value <= character.value && character.value <= pattern[index + 2].value { isMember = true }
                index += 3
            } else {
                if low == character { isMember = true }
                index += 1
            }
        }
        guard index < pattern.endIndex else { return nil }
        return (isMember != isNegated, index + 1)
    }

    private static func hasBalancedBrackets(_ segment: [Unicode.Scalar]) -> Bool {
        var index = 0
        while index < segment.count {
            if segment[index] == "[" {
                guard let close = segment[(index + 2 <= segment.count ? index + 2 : segment.count)...].firstIndex(of: "]")
                else { return false }
                index = close
            }
            index += 1
        }
        return true
    }

    /// Every pattern the braces stand for.
    private static func expand(_ scalars: [Unicode.Scalar], pattern: String) throws(PathGlobError) -> [[Unicode.Scalar]] {
        guard let open = scalars.firstIndex(of: "{") else {
            if scalars.contains("}") { throw PathGlobError(pattern: pattern, problem: "a `}` has no `{` before it") }
            return [scalars]
        }
        var depth = 0
        var commas: [Int] = []
        var close: Int?
        for index in open..<scalars.count {
            switch scalars[index] {
            case "{": depth += 1
            case "}":
                depth -= 1
                if depth == 0 { close = index }
            case "," where depth == 1: commas.append(index)
            default: break
            }
            if close != nil { break }
        }
        guard let close else { throw PathGlobError(pattern: pattern, problem: "a `{` has no `}` after it") }
        let prefix = Array(scalars[..<open])
        let suffix = Array(scalars[(close + 1)...])
        var bounds = [open] + commas + [close]
        var results: [[Unicode.Scalar]] = []
        for index in 0..<(bounds.count - 1) {
            let alternative = Array(scalars[(bounds[index] + 1)..<bounds[index + 1]])
            for expanded in try expand(prefix + alternative + suffix, pattern: pattern) {
                results.append(expanded)
                if results.count > maxAlternatives {
                    throw PathGlobError(pattern: pattern, problem: "its braces stand for more than \(maxAlternatives) patterns")
                }
            }
        }
        bounds.removeAll()
        return results
    }
}

/// A glob that cannot be used, and why.
public struct PathGlobError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The pattern as given.
    public var pattern: String
    /// What is wrong with it.
    public var problem: String

    public var description: String { "the glob \"\(pattern)\" cannot be used: \(problem)" }
}
