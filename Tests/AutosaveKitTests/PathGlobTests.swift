import AutosaveKit
import Testing

/// Globs as language servers register them (the LSP's syntax), against paths relative to the root.
@Suite struct PathGlobTests {
    @Test(arguments: [
        ("**/*.py", "a.py", true), ("**/*.py", "src/pkg/a.py", true), ("**/*.py", "a.pyc", false),
        ("**/*.py", "src/a.py/", true), ("*.py", "src/a.py", false), ("*.py", "a.py", true),
        ("src/**", "src/a/b/c.txt", true), ("src/**", "srcs/a", false), ("src/**/test_*.py", "src/test_a.py", true),
        ("src/**/test_*.py", "src/x/y/test_a.py", true), ("**/{a,b}.txt", "x/b.txt", true),
        ("**/{a,b}.txt", "x/c.txt", false), ("{src,test}/**/*.{ts,tsx}", "test/u/v.tsx", true),
        ("{src,test}/**/*.{ts,tsx}", "lib/v.ts", false), ("f?.txt", "f1.txt", true), ("f?.txt", "f12.txt", false),
        ("f?.txt", "fé.txt", true), ("[a-c]*.md", "b.md", true), ("[a-c]*.md", "d.md", false),
        ("[!a-c]*.md", "d.md", true), ("[!a-c]*.md", "a.md", false), ("**", "anything/at/all", true),
        ("/abs.txt", "abs.txt", true), ("**/node_modules/**", "a/node_modules/b/c.js", true),
        ("a*b*c", "aXXbYYc", true), ("a*b*c", "aXXbYY", false),
    ])
    func matches(_ pattern: String, _ path: String, _ expected: Bool) throws {
        #expect(try PathGlob(pattern).matches(path) == expected, "\(pattern) against \(path)")
    }

    @Test(arguments: ["", "{a,b", "a}", "[abc", "{{{{{{{{{a,b},c},d},e},f},g},h},i},j}{1,2,3,4,5,6,7,8,9}{1,2,3,4,5,6,7,8,9}"])
    func refusesWhatCannotBeUsed(_ pattern: String) {
        #expect(throws: PathGlobError.self) { try PathGlob(pattern) }
    }
}
