@testable import Inotify
import PropertyBased
import Testing

/// A probe thread's scratch collects one directory's names after another, reusing its buffer and
/// a hash table it never clears. The class of bug is "one directory's names leak into the next":
/// a name refused as a duplicate because the directory before held it, a stale slot found after
/// the table grew, an earlier result changed by a later directory. The property: each
/// directory's `FileNames` answers as one built by `insert` alone would, then and later.
@Suite struct FileNameCollectorTests {
    @Test func eachDirectoryCollectsAsInsertingIntoAFreshSetWould() {
        var random = Xoshiro(seed: (0x636F_6C6C, 0x6563_7421, 0x6E61_6D65, 0x7321_2121))
        var collector = FileNameCollector()
        var earlier: [(FileNames, FileNames)] = []
        // Small directories and large ones, in turn, so the table grows in the middle of a
        // directory, and a small one after a large one meets slots of older generations.
        for round in 0..<40 {
            let universe = round % 5 == 4 ? 3_000 + round * 10 : 1 + round % 7
            collector.begin()
            var expected = FileNames()
            for _ in 0..<(universe * 2) {
                let pick = Int(random.next() % UInt64(universe + FileNamesTests.shapes.count))
                let name = pick < FileNamesTests.shapes.count ? FileNamesTests.shapes[pick] : "n\(pick)"
                let collected = collector.insert(name)
                #expect(collected == expected.insert(name), "\(name), round \(round)")
            }
            let collected = collector.names()
            #expect(collected.count == expected.count, "round \(round)")
            #expect(Array(collected) == Array(expected), "insertion order, round \(round)")
            for name in expected { #expect(collected.contains(name), "\(name), round \(round)") }
            #expect(!collected.contains("n\(universe + FileNamesTests.shapes.count)"), "round \(round)")
            earlier.append((collected, expected))
        }
        // Later directories written into the same scratch did not reach into earlier results.
        for (index, (collected, expected)) in earlier.enumerated() {
            #expect(Array(collected) == Array(expected), "directory \(index), read back at the end")
        }
    }

    @Test func refusesWhatASetRefusesAndKeepsNamesBeyondTheShortLength() {
        var collector = FileNameCollector()
        collector.begin()
        let long = String(repeating: "l", count: 300)
        let answers = [
            collector.insert(""), collector.insert(String(repeating: "o", count: Int(UInt16.max) + 1)),
            collector.insert(long), collector.insert(long), collector.insert("a"),
        ]
        #expect(answers == [false, false, true, false, true])
        #expect(Array(collector.names()) == [long, "a"])
        collector.begin()
        let again = collector.insert(long)
        #expect(again, "a new directory has not seen it")
        #expect(collector.names().count == 1)
    }

    @Test func aCollectedSetTakesInsertsAndRemovalsAsAnyOther() {
        var collector = FileNameCollector()
        collector.begin()
        for index in 0..<40 { _ = collector.insert("f\(index)") }
        var names = collector.names()
        #expect(names.contains("f39"), "an index was built for more names than a walk takes")
        let answers = [names.insert("f3"), names.insert("g"), names.remove("f0")]
        #expect(answers == [false, true, true])
        #expect(names.count == 40)
        #expect(!names.contains("f0"))
    }
}
