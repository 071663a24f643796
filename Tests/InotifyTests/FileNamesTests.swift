import Inotify
import PropertyBased
import Testing

/// The compact name set a directory's files are known by: it must answer exactly as a
/// `Set<String>` would, through the walk of a few names, the index of many, removals and the
/// compaction that follows them.
@Suite struct FileNamesTests {
    /// Names of every shape a directory holds: short, long, non-ASCII, one past the one-byte length.
    static let shapes = ["f", "main.swift", "ÉTÉ-été", "😀.txt", String(repeating: "x", count: 254),
                         String(repeating: "y", count: 255), String(repeating: "z", count: 300), ".hidden", "a b"]

    @Test func answersAsASetWouldThroughEveryOperation() {
        var random = Xoshiro(seed: (0x6E61_6D65, 0x7365_7421, 0x6D6F_6465, 0x6C21_2121))
        for round in 0..<30 {
            var names = FileNames()
            var model: [String] = []
            // Rounds reach from a handful of names (the walk) to thousands (the index, compaction).
            let universe = 4 + round * round * 2
            for _ in 0..<(universe * 3) {
                let pick = Int(random.next() % UInt64(universe))
                let name = pick < Self.shapes.count ? Self.shapes[pick] : "n\(pick)"
                switch random.next() % 3 {
                case 0, 1:
                    let inserted = names.insert(name)
                    #expect(inserted == !model.contains(name), "insert \(name), round \(round)")
                    if !model.contains(name) { model.append(name) }
                default:
                    let removed = names.remove(name)
                    #expect(removed == model.contains(name), "remove \(name), round \(round)")
                    model.removeAll { $0 == name }
                }
                // Counted as the names come and go, across the walk and the index both ways.
                if names.count != model.count || names.isEmpty != model.isEmpty {
                    Issue.record("count \(names.count) (empty: \(names.isEmpty)), \(model.count) expected, round \(round)")
                }
            }
            #expect(names.count == model.count, "round \(round)")
            #expect(Array(names) == model, "iterated in insertion order, round \(round)")
            for pick in 0..<universe {
                let name = pick < Self.shapes.count ? Self.shapes[pick] : "n\(pick)"
                #expect(names.contains(name) == model.contains(name), "contains \(name), round \(round)")
            }
        }
    }

    @Test func removingMostNamesKeepsTheRestAndTheirOrder() {
        let all = (0..<5_000).map { "file-\($0).txt" }
        var names = FileNames(all)
        var removed = 0
        for (index, name) in all.enumerated() where index % 10 != 0 && names.remove(name) { removed += 1 }
        #expect(removed == 4_500)
        let kept = all.enumerated().filter { $0.offset % 10 == 0 }.map(\.element)
        #expect(Array(names) == kept)
        #expect(names.count == 500)
        #expect(!names.contains("file-1.txt"))
        let cameBack = names.insert("file-1.txt")
        #expect(cameBack, "a removed name can come back")
        #expect(Array(names) == kept + ["file-1.txt"])
    }

    @Test func theEmptyNameIsNeverAMemberAndRemovingTheLastNameEmptiesTheSet() {
        var names: FileNames = ["only"]
        let insertedEmpty = names.insert("")
        #expect(!insertedEmpty)
        #expect(!names.contains(""))
        let removedOnly = names.remove("only")
        #expect(removedOnly)
        #expect(names.isEmpty)
        #expect(Array(names).isEmpty)
        let removedAgain = names.remove("only")
        #expect(!removedAgain)
    }

    @Test func equalityIgnoresOrder() {
        #expect(FileNames(["a", "b", "c"]) == FileNames(["c", "a", "b"]))
        #expect(FileNames(["a", "b"]) != FileNames(["a", "b", "c"]))
        var changed = FileNames((0..<100).map { "n\($0)" })
        changed.remove("n50")
        changed.insert("n50")
        #expect(changed == FileNames((0..<100).map { "n\($0)" }))
    }

    /// A copy is a value: changing it (through the walk or the index of a big directory) leaves
    /// the original as it was, and the other way round.
    @Test(arguments: [5, 200]) func aCopyChangedLeavesTheOriginalAsItWas(size: Int) {
        let names = (0..<size).map { "name-\($0).txt" }
        var original = FileNames(names)
        var copy = original
        copy.remove("name-3.txt")
        copy.insert("added.txt")
        #expect(original.contains("name-3.txt") && !original.contains("added.txt"))
        #expect(Array(original) == names)
        #expect(!copy.contains("name-3.txt") && copy.contains("added.txt") && copy.count == size)
        let again = original
        original.remove("name-4.txt")
        #expect(again.contains("name-4.txt") && !original.contains("name-4.txt"))
        #expect(Array(again) == names)
    }
}
