@testable import AutosaveKit
@testable import Inotify
import PropertyBased
import Testing

/// The watcher's known files, held compactly per directory: every answer classification and the
/// rescans ask of them must be what a plain set of paths would give, whole directories moved
/// and removed included.
@Suite struct KnownFilesTests {
    static let directories = ["", "a", "a/b", "a/b/c", "ab", "d", "d/e", "lib/src2"]
    static let names = ["f", "main.swift", "été.txt", "😀", String(repeating: "l", count: 300), "n1", "n2", "n3"]

    /// The paths below `directory` in a plain set, as `KnownFiles` sees "below".
    static func below(_ directory: String, in model: Set<String>) -> Set<String> {
        model.filter { directory.isEmpty || $0.hasPrefix(directory + "/") }
    }

    @Test func answersAsASetOfPathsWouldThroughEveryOperation() {
        var random = Xoshiro(seed: (0x6B6E_6F77, 0x6E21_2121, 0x6669_6C65, 0x7321_2121))
        for round in 0..<60 {
            var known = KnownFiles([String]())
            var model = Set<String>()
            for _ in 0..<(20 + round * 10) {
                let directory = Self.directories[Int(random.next() % UInt64(Self.directories.count))]
                let other = Self.directories[Int(random.next() % UInt64(Self.directories.count))]
                let name = Self.names[Int(random.next() % UInt64(Self.names.count))] + "\(random.next() % 40)"
                let path = directory.isEmpty ? name : directory + "/" + name
                switch random.next() % 10 {
                case 0...5:
                    known.insert(path)
                    model.insert(path)
                case 6, 7:
                    known.remove(path)
                    model.remove(path)
                case 8:
                    let removed = known.removeDirectory(directory)
                    #expect(removed == Self.below(directory, in: model).count)
                    model.subtract(Self.below(directory, in: model))
                default:
                    // A directory moves neither into itself nor over one of its parents (the
                    // kernel refuses both), and only over nothing or an empty directory.
                    guard !directory.isEmpty, !other.isEmpty, other != directory, !other.hasPrefix(directory + "/"),
                        !directory.hasPrefix(other + "/")
                    else { continue }
                    known.moveDirectory(from: directory, to: other)
                    let moving = Self.below(directory, in: model)
                    model.subtract(Self.below(other, in: model))
                    model.subtract(moving)
                    model.formUnion(moving.map { other + $0.dropFirst(directory.count) })
                }
            }
            #expect(known.count == model.count, "round \(round)")
            #expect(Set(known.all) == model, "round \(round)")
            for directory in Self.directories {
                #expect(Set(known.filesBelow(directory)) == Self.below(directory, in: model), "below \(directory), round \(round)")
                let direct = Self.below(directory, in: model).filter { !$0.dropFirst(directory.isEmpty ? 0 : directory.count + 1).contains("/") }
                #expect(Set(known.files(in: directory)) == direct, "in \(directory), round \(round)")
            }
            for path in model { #expect(known.contains(path), "\(path), round \(round)") }
        }
    }

    @Test func aDirectoryOfThousandsOfFilesMovesWhole() {
        let top = (0..<5_000).map { "src/file\($0).swift" }
        let deep = (0..<2_000).map { "src/deep/er/f\($0)" }
        var known = KnownFiles(top + deep + ["srcs/not-below.txt", "README"])
        known.moveDirectory(from: "src", to: "lib/src2")
        #expect(known.count == 7_002)
        #expect(known.filesBelow("src").isEmpty)
        #expect(known.files(in: "lib/src2").count == 5_000)
        #expect(Set(known.filesBelow("lib/src2")) == Set((top + deep).map { "lib/src2" + $0.dropFirst("src".count) }))
        #expect(known.contains("lib/src2/deep/er/f1999") && !known.contains("src/deep/er/f1999"))
        #expect(known.contains("srcs/not-below.txt"), "a sibling sharing the prefix stays")
        // And back, then removed whole.
        known.moveDirectory(from: "lib/src2", to: "src")
        #expect(Set(known.filesBelow("src")) == Set(top + deep))
        let removed = known.removeDirectory("src")
        #expect(removed == 7_000)
        #expect(Set(known.all) == ["srcs/not-below.txt", "README"])
    }

    @Test func aScansListingsAreTheSameKnownFilesAsTheirPaths() {
        let listings = [
            DirectoryScan.Listing(directory: "", names: ["README", "b.txt"], changeTimes: nil),
            DirectoryScan.Listing(directory: "a", names: FileNames((0..<300).map { "f\($0)" }), changeTimes: nil),
            DirectoryScan.Listing(directory: "empty", names: [], changeTimes: nil),
        ]
        let fromListings = KnownFiles(listings)
        let paths = ["README", "b.txt"] + (0..<300).map { "a/f\($0)" }
        #expect(fromListings.count == 302)
        #expect(Set(fromListings.all) == Set(paths))
        #expect(Set(KnownFiles(paths).all) == Set(paths))
        #expect(fromListings.files(in: "empty").isEmpty)
    }

    @Test func aDirectoryListedTwiceHoldsTheUnionOfItsNamesCountedOnce() {
        let listings = [
            DirectoryScan.Listing(directory: "a", names: ["x", "y", "z"], changeTimes: nil),
            DirectoryScan.Listing(directory: "b", names: ["x"], changeTimes: nil),
            DirectoryScan.Listing(directory: "a", names: ["y", "w"], changeTimes: nil),
        ]
        let known = KnownFiles(listings)
        #expect(known.count == 5)
        #expect(Set(known.all) == ["a/x", "a/y", "a/z", "a/w", "b/x"])
    }
}
