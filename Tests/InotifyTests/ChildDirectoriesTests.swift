@testable import Inotify
import Testing

/// A directory node's children, by name byte for byte: through any mix of additions, replacements
/// and removals they must answer as a dictionary by name would.
@Suite struct ChildDirectoriesTests {
    @Test func answersAsADictionaryByNameWould() {
        var random = SystemRandomNumberGenerator()
        let parent = DirectoryNode(name: "", parent: nil)
        let universe = (0..<60).map { "n\($0)" } + ["", "A", "é", "e\u{301}", "zz", "n1x"]
        for round in 0..<20 {
            let initial = universe.shuffled(using: &random).prefix(round * 3).map { DirectoryNode(name: $0, parent: parent) }
            var children = ChildDirectories(initial)
            // Keyed by bytes: `String` keys would take `é` and `e\u{301}` for one name.
            var model: [[UInt8]: DirectoryNode] = [:]
            for node in initial { model[Array(node.name.utf8)] = node }
            for _ in 0..<300 {
                let name = universe.randomElement(using: &random)!
                if Bool.random(using: &random) {
                    let node = DirectoryNode(name: name, parent: parent)
                    children[name] = node
                    model[Array(name.utf8)] = node
                } else {
                    children[name] = nil
                    model[Array(name.utf8)] = nil
                }
                #expect(children[name] === model[Array(name.utf8)])
            }
            #expect(children.count == model.count)
            for (bytes, node) in model { #expect(children[String(decoding: bytes, as: UTF8.self)] === node) }
            #expect(Set(children.map { Array($0.name.utf8) }) == Set(model.keys))
            #expect(children.values.map(\.name) == children.values.map(\.name).sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) })
        }
    }

    /// Names canonically equal but spelled with other bytes are two children, as they are two
    /// directories on Linux; of two nodes of one name handed over at once, the later is kept.
    @Test func namesAreBytesAndTheLaterOfTwoSpellingsIsKept() {
        let parent = DirectoryNode(name: "", parent: nil)
        let first = DirectoryNode(name: "é", parent: parent)
        let decomposed = DirectoryNode(name: "e\u{301}", parent: parent)
        let later = DirectoryNode(name: "é", parent: parent)
        let children = ChildDirectories([first, decomposed, later])
        #expect(children.count == 2)
        #expect(children["é"] === later)
        #expect(children["e\u{301}"] === decomposed)
    }
}
