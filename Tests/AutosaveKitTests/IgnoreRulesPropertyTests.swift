import AutosaveKit
import Glibc
import Inotify
import PropertyBased
import Testing

/// Randomized checks of the ignore rules against an independent oracle, glibc's `fnmatch(3)`,
/// and of the screen a scan uses to skip asking them: the classes of bug are "a pattern matches
/// what gitignore would not (or misses what it would)" and "the screen waves through a file the
/// rules ignore", which would have the agent watch, report and save over a dropping.
@Suite struct IgnoreRulesPropertyTests {
    /// Pattern pieces: literals, wildcards, classes, an escape. The letters spell none of the
    /// editor droppings (no `s`, `~`, `#`, `4`), so only the pattern under test can match.
    static let pieces = ["a", "b", "c", "x", ".", "*", "?", "[ab]", "[!a]", "[a-c]", "\\a", "ab", ".x"]
    static let letters: [Character] = ["a", "b", "c", "x", "."]

    struct Draw {
        var random: Xoshiro
        mutating func below(_ bound: Int) -> Int { Int(random.next() % UInt64(bound)) }

        mutating func segment() -> String { (0...below(3)).map { _ in IgnoreRulesPropertyTests.pieces[below(IgnoreRulesPropertyTests.pieces.count)] }.joined() }

        /// `a`, `a/b*`, `/x?` ...: one to three segments, anchored by a slash or not.
        mutating func pattern() -> String {
            let segments = (0...below(3)).map { _ in segment() }.joined(separator: "/")
            return below(3) == 0 ? "/" + segments : segments
        }

        mutating func path() -> String {
            (0...below(3)).map { _ in String((0...below(4)).map { _ in IgnoreRulesPropertyTests.letters[below(5)] }) }
                .joined(separator: "/")
        }
    }

    /// What gitignore(5) says of one pattern (without `**`) and a file's path, by `fnmatch` with
    /// `FNM_PATHNAME`: a pattern with a slash matches the whole path from the root, one without
    /// matches the name.
    static func oracle(_ pattern: String, _ path: String) -> Bool {
        if pattern.hasPrefix("/") || pattern.contains("/") {
            let anchored = pattern.hasPrefix("/") ? String(pattern.dropFirst()) : pattern
            return fnmatch(anchored, path, FNM_PATHNAME) == 0
        }
        let name = path.split(separator: "/").last.map(String.init) ?? path
        return fnmatch(pattern, name, FNM_PATHNAME) == 0
    }

    @Test func aPatternIgnoresAFileExactlyWhenFnmatchMatchesIt() {
        var draw = Draw(random: Xoshiro(seed: (0x6967_6E6F, 0x7265_2121, 0x666E_6D61, 0x7463_6821)))
        var matched = 0
        for _ in 0..<4_000 {
            let pattern = draw.pattern()
            // `**` spans directories in gitignore, which fnmatch knows nothing of.
            guard !pattern.contains("**") else { continue }
            let rules = IgnoreRules(patterns: [pattern], stateDirectory: nil)
            for _ in 0..<8 {
                let path = draw.path()
                let expected = Self.oracle(pattern, path)
                if expected { matched += 1 }
                #expect(rules.isIgnored(path, isDirectory: false) == expected, "pattern \(pattern), path \(path)")
            }
        }
        #expect(matched > 500, "the draw reaches matches often enough to mean something (\(matched))")
    }

    @Test func theScreenNeverWavesThroughAFileTheRulesIgnore() {
        var draw = Draw(random: Xoshiro(seed: (0x7363_7265, 0x656E_2121, 0x7761_7665, 0x7321_2121)))
        var ignored = 0
        var screenedOut = 0
        for _ in 0..<1_500 {
            // Several patterns, some negated or for directories only, as a user's list has.
            let patterns = (0...draw.below(4)).map { _ in
                var pattern = draw.pattern()
                if draw.below(5) == 0 { pattern = "!" + pattern }
                if draw.below(5) == 0 { pattern += "/" }
                return pattern
            }
            let rules = IgnoreRules(patterns: patterns, stateDirectory: ".autosave")
            for _ in 0..<10 {
                let path = draw.path()
                let name = Array(path.split(separator: "/").last!.utf8)
                let mayApply = rules.fileNameScreen.mayApply(first: name.first!, last: name.last!)
                if !mayApply { screenedOut += 1 }
                guard rules.isIgnored(path, isDirectory: false) else { continue }
                ignored += 1
                #expect(mayApply, "patterns \(patterns) ignore \(path), which the screen passes as not ignored")
            }
        }
        #expect(ignored > 300 && screenedOut > 300, "both sides are reached (\(ignored) ignored, \(screenedOut) screened out)")
    }

    @Test func theDefaultRulesScreenOutPlainNamesAndKeepEveryDropping() {
        let rules = IgnoreRules(patterns: [], stateDirectory: ".autosave")
        func mayApply(_ name: String) -> Bool {
            let bytes = Array(name.utf8)
            return rules.fileNameScreen.mayApply(first: bytes.first!, last: bytes.last!)
        }
        for name in ["main.swift", "README.md", "f0001.txt", "Makefile"] {
            #expect(!mayApply(name), "\(name) is kept without asking the rules")
        }
        for name in [".a.txt.swp", "a.swx", "notes~", "4913", ".#notes", "#notes#", "sedAb12Zq", ".a.autosave-x1.tmp"] {
            #expect(mayApply(name) && rules.isIgnored(name, isDirectory: false), "\(name)")
        }
        let anyName = IgnoreRules(patterns: ["*"], stateDirectory: nil)
        #expect(anyName.fileNameScreen.mayApply(first: UInt8(ascii: "m"), last: UInt8(ascii: "t")), "`*` may apply to any name")
    }
}
