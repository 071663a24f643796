import ByteNames
import Testing

/// The byte-wise helpers that every comparison of names goes through, on the spellings that
/// `String` conflates.
@Suite struct ByteNamesTests {
    let composed = "caf\u{E9}"
    let decomposed = "cafe\u{301}"

    @Test func twinsAreTwoKeysTwoEntriesAndTwoMembers() {
        #expect(composed == decomposed, "String conflates them, which is the point")
        #expect(PathKey(composed) != PathKey(decomposed))
        var map: PathMap<Int> = [composed: 1]
        map[decomposed] = 2
        #expect(map.count == 2 && map[composed] == 1 && map[decomposed] == 2)
        let set = PathSet([composed, decomposed, composed])
        #expect(set.count == 2)
        #expect(!PathSet([composed]).contains(decomposed))
        #expect(map.sortedKeys == [composed, decomposed].sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) })
    }

    @Test func prefixesAreBytesAndWholeComponents() {
        #expect(!("/srv/" + composed + "/a").isPath(inside: "/srv/" + decomposed))
        #expect(("/srv/" + composed + "/a").isPath(inside: "/srv/" + composed))
        #expect(!"/srv/ab/c".isPath(inside: "/srv/a"))
        #expect("a/b".isPath(inside: ""))
        #expect("/x".isPath(inside: "/"))
        #expect("/srv/a/b/c".pathBelow("/srv/a") == "b/c")
        #expect("/srv/a".pathBelow("/srv/a") == nil)
        #expect("/srv/ab".pathBelow("/srv/a") == nil)
    }

    @Test func componentsSplitAtEverySlashByte() {
        // "/" then U+0301 is one Character, so `split(separator: "/")` would not split there.
        let sneaky = ".git/\u{301}hooks"
        #expect(sneaky.split(separator: "/").count == 1)
        #expect(sneaky.pathComponents == [".git", "\u{301}hooks"])
        #expect("//a///b/".pathComponents == ["a", "b"])
        #expect(("/\u{301}x").isAbsolutePath)
        #expect(!("/\u{301}x").hasPrefix("/"), "String sees no slash at its start")
        #expect("a/b/c".folderAndName == ("a/b", "c"))
        #expect("c".folderAndName == ("", "c"))
        #expect("/c".folderAndName == ("/", "c"))
        #expect("a/\u{301}b".folderAndName == ("a", "\u{301}b"))
    }
}
