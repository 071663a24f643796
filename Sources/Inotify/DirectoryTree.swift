import ByteNames
import Glibc

/// One directory of the watched tree, as the watcher knows it.
///
/// Nodes are linked by parent and name rather than keyed by path, so renaming a directory is
/// one assignment and every path below it follows.
final class DirectoryNode {
    var name: String
    weak var parent: DirectoryNode?
    var children = ChildDirectories()
    /// The kernel watch on this directory; nil when it could not be watched.
    var wd: Int32?

    init(name: String, parent: DirectoryNode?) {
        self.name = name
        self.parent = parent
    }

    /// The path relative to the root: `""` for the root, `a/b` below it.
    var relativePath: String {
        guard let parent else { return "" }
        let above = parent.relativePath
        return above.isEmpty ? name : above + "/" + name
    }

    /// This node and every node below it, parents first.
    var subtree: [DirectoryNode] {
        var result: [DirectoryNode] = []
        var stack = [self]
        while let node = stack.popLast() {
            result.append(node)
            stack.append(contentsOf: node.children.values)
        }
        return result
    }

    /// Adds `child` under `name`, replacing whatever was there.
    func adopt(_ child: DirectoryNode, as name: String) {
        child.name = name
        child.parent = self
        children[name] = child
    }

    /// Unlinks this node from its parent, keeping its own subtree intact.
    func detach() {
        if let parent, parent.children[name] === self { parent.children[name] = nil }
        parent = nil
    }
}

/// A directory node's children, by name byte for byte: an array kept in byte order and searched
/// by halves, rather than a hash table.
///
/// Most directories of a real tree have a handful of subdirectories or none: a table for ten
/// children took about 460 bytes (sixteen buckets of a 16-byte key and an 8-byte value, and
/// the table's header), this array 112, and on a tree of 111,110 directories that was 4 MB. A
/// lookup is a binary search; an insertion shifts the ones after it, which is nothing for the
/// one directory an event makes, and a new directory's children from a scan go in at once,
/// sorted once (`init(_:)`).
struct ChildDirectories: Sequence {
    /// The children in byte order of their names.
    private var nodes: [DirectoryNode] = []

    init() {}

    /// The children `nodes` of a directory, each under its own name: a later node of the same
    /// name replaces an earlier one, as a dictionary's assignment would.
    init(_ nodes: [DirectoryNode]) {
        // Stable: of two of the same name, the later stays later, and is the one kept.
        let sorted = nodes.enumerated().sorted { lhs, rhs in
            let order = Self.compare(lhs.element.name, rhs.element.name)
            return order != 0 ? order < 0 : lhs.offset < rhs.offset
        }.map(\.element)
        var kept: [DirectoryNode] = []
        kept.reserveCapacity(sorted.count)
        for node in sorted {
            if let last = kept.last, Self.compare(last.name, node.name) == 0 {
                kept[kept.count - 1] = node
            } else {
                kept.append(node)
            }
        }
        self.nodes = kept
    }

    var isEmpty: Bool { nodes.isEmpty }
    var count: Int { nodes.count }

    /// The children, in byte order of their names.
    var values: [DirectoryNode] { nodes }

    /// The child named `name`; assigning nil removes it, a node adds or replaces it.
    subscript(name: String) -> DirectoryNode? {
        get {
            let (position, found) = search(name)
            return found ? nodes[position] : nil
        }
        set {
            let (position, found) = search(name)
            switch (newValue, found) {
            case (let node?, true): nodes[position] = node
            case (let node?, false): nodes.insert(node, at: position)
            case (nil, true): nodes.remove(at: position)
            case (nil, false): break
            }
        }
    }

    func makeIterator() -> some IteratorProtocol<(name: String, node: DirectoryNode)> {
        nodes.lazy.map { (name: $0.name, node: $0) }.makeIterator()
    }

    /// Where `name` is, or where it would go.
    private func search(_ name: String) -> (position: Int, found: Bool) {
        var low = 0
        var high = nodes.count
        while low < high {
            let middle = (low + high) / 2
            let order = Self.compare(nodes[middle].name, name)
            if order == 0 { return (middle, true) }
            if order < 0 { low = middle + 1 } else { high = middle }
        }
        return (low, false)
    }

    /// Byte order: negative, zero or positive as `lhs` sorts before, with or after `rhs`.
    private static func compare(_ lhs: String, _ rhs: String) -> Int {
        var lhs = lhs
        var rhs = rhs
        return lhs.withUTF8 { left in
            rhs.withUTF8 { right in
                let common = Swift.min(left.count, right.count)
                if common > 0 {
                    let order = memcmp(left.baseAddress!, right.baseAddress!, common)
                    if order != 0 { return Int(order) }
                }
                return left.count - right.count
            }
        }
    }
}
