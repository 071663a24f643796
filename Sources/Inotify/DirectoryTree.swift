import ByteNames

/// One directory of the watched tree, as the watcher knows it.
///
/// Nodes are linked by parent and name rather than keyed by path, so renaming a directory is
/// one assignment and every path below it follows.
final class DirectoryNode {
    var name: String
    weak var parent: DirectoryNode?
    var children: PathMap<DirectoryNode> = [:]
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
