import AutosaveKit
import Testing

@Suite struct IgnoreRulesTests {
    private func rules(_ patterns: [String], state: String? = ".autosave") -> IgnoreRules {
        IgnoreRules(patterns: patterns, stateDirectory: state)
    }

    @Test func ownedNamesAreAlwaysIgnored() {
        let rules = rules(["!.git/", "!*.tmp", "!.autosave/"])
        #expect(rules.isIgnored(".git", isDirectory: true))
        #expect(rules.isIgnored("vendor/lib/.git", isDirectory: true))
        #expect(rules.isIgnored(".autosave", isDirectory: true))
        #expect(!rules.isIgnored("src/.autosave", isDirectory: true), "the state dir is anchored at the root")
        #expect(rules.isIgnored("src/.a.txt.autosave-x1y2.tmp", isDirectory: false))
    }

    @Test func editorDroppingsAreIgnored() {
        let rules = rules([])
        for name in [".a.txt.swp", "a.swx", "notes.txt~", "4913", ".#notes.txt", "#notes.txt#", "sedAb12Zq", ".goutputstream-XYZ12"] {
            #expect(rules.isIgnored("src/" + name, isDirectory: false), "\(name)")
        }
        for name in ["sed.txt", "4914", "a.swpx", "#partial", "sedAb12Zq7"] {
            #expect(!rules.isIgnored("src/" + name, isDirectory: false), "\(name)")
        }
    }

    @Test func unanchoredPatternsMatchAtAnyDepth() {
        let rules = rules(["*.o", "build/", "node_modules"])
        #expect(rules.isIgnored("a.o", isDirectory: false))
        #expect(rules.isIgnored("x/y/a.o", isDirectory: false))
        #expect(!rules.isIgnored("a.o.c", isDirectory: false))
        #expect(rules.isIgnored("x/build", isDirectory: true))
        #expect(!rules.isIgnored("x/build", isDirectory: false), "a trailing slash matches directories only")
        #expect(rules.isIgnored("deep/node_modules", isDirectory: true))
        #expect(rules.isIgnored("node_modules", isDirectory: false))
    }

    @Test func patternsWithASlashAreAnchored() {
        let rules = rules(["/dist", "docs/*.html", "a/**/z", "logs/**", "**/tmp"])
        #expect(rules.isIgnored("dist", isDirectory: true))
        #expect(!rules.isIgnored("src/dist", isDirectory: true))
        #expect(rules.isIgnored("docs/index.html", isDirectory: false))
        #expect(!rules.isIgnored("docs/api/index.html", isDirectory: false), "`*` does not cross `/`")
        #expect(!rules.isIgnored("x/docs/index.html", isDirectory: false))
        #expect(rules.isIgnored("a/z", isDirectory: false), "`**` matches zero directories")
        #expect(rules.isIgnored("a/b/c/z", isDirectory: false))
        #expect(rules.isIgnored("logs/x/y.log", isDirectory: false))
        #expect(!rules.isIgnored("logs", isDirectory: true), "`x/**` matches what is inside, not x")
        #expect(rules.isIgnored("tmp", isDirectory: true))
        #expect(rules.isIgnored("p/q/tmp", isDirectory: true))
    }

    @Test func theLastMatchingPatternWinsAndNegationReincludes() {
        let rules = rules(["*.log", "!keep.log", "*~", "!important~"])
        #expect(rules.isIgnored("x.log", isDirectory: false))
        #expect(!rules.isIgnored("keep.log", isDirectory: false))
        #expect(!rules.isIgnored("important~", isDirectory: false), "a user may re-include an editor dropping")
        #expect(rules.isIgnored("other~", isDirectory: false))
    }

    @Test func classesWildcardsAndEscapes() {
        let rules = rules(["file[0-9].txt", "?.c", "[!a]b", "\\#literal", "\\!bang", "trailing\\ "])
        #expect(rules.isIgnored("file7.txt", isDirectory: false))
        #expect(!rules.isIgnored("filex.txt", isDirectory: false))
        #expect(rules.isIgnored("a.c", isDirectory: false))
        #expect(!rules.isIgnored("ab.c", isDirectory: false))
        #expect(rules.isIgnored("xb", isDirectory: false))
        #expect(!rules.isIgnored("ab", isDirectory: false))
        #expect(rules.isIgnored("#literal", isDirectory: false))
        #expect(rules.isIgnored("!bang", isDirectory: false))
        #expect(rules.isIgnored("trailing ", isDirectory: false))
    }

    @Test func exclusionIsInheritedFromDirectories() {
        let rules = rules(["build/", "!build/keep.txt"])
        #expect(rules.isExcluded("build/keep.txt", isDirectory: false), "a file below an ignored directory cannot be re-included")
        #expect(!rules.isExcluded("src/keep.txt", isDirectory: false))
    }

    @Test func commentsAndBlankLinesMatchNothing() {
        let rules = rules(["# comment", "", "   "])
        #expect(!rules.isIgnored("# comment", isDirectory: false))
        #expect(!rules.isIgnored("x", isDirectory: false))
    }
}
