/// The contents decoded or recorded most recently, by content id, up to a byte budget and a count.
///
/// Recording a file's next version needs its previous content (the new one is compressed against
/// it), and decoding a content needs every content down its chain: keeping the last ones makes the
/// common case, the same file saved again and again, cost one compression and no decompression.
/// Entries are never stale: content ids are never reused (`AUTOINCREMENT`), and a content's bytes
/// never change, whatever becomes of how they are stored (pruning compresses a content again, but
/// its bytes stay the same; a deleted content is `forget`-ten here too).
struct ContentCache {
    /// The bytes kept at most; a content larger than this is not kept at all.
    let budget: Int
    /// The contents kept at most, so that a stream of small files keeps the bookkeeping short.
    let capacity: Int
    private var entries: [Int64: [UInt8]] = [:]
    /// Ids from least to most recently used.
    private var order: [Int64] = []
    private var bytes = 0

    init(budget: Int, capacity: Int = 64) {
        self.budget = budget
        self.capacity = capacity
    }

    /// Forgets every content: after a rolled-back batch, whose ids the next contents will reuse.
    mutating func removeAll() {
        entries.removeAll()
        order.removeAll()
        bytes = 0
    }

    /// The content's bytes, when kept; marks it the most recently used.
    mutating func bytes(of id: Int64) -> [UInt8]? {
        guard let content = entries[id] else { return nil }
        touch(id)
        return content
    }

    /// Keeps `content` as content `id`'s bytes, evicting the least recently used beyond the budget.
    mutating func keep(_ content: [UInt8], as id: Int64) {
        guard content.count <= budget else { return }
        if let old = entries.updateValue(content, forKey: id) {
            bytes -= old.count
            touch(id)
        } else {
            order.append(id)
        }
        bytes += content.count
        while bytes > budget || order.count > capacity, let oldest = order.first {
            order.removeFirst()
            bytes -= entries.removeValue(forKey: oldest)?.count ?? 0
        }
    }

    /// Drops content `id`'s bytes, if kept: a content deleted (pruned, forgotten) leaves no copy
    /// in memory, where a forgotten secret would otherwise linger.
    mutating func forget(_ id: Int64) {
        guard let content = entries.removeValue(forKey: id) else { return }
        bytes -= content.count
        order.removeAll { $0 == id }
    }

    private mutating func touch(_ id: Int64) {
        // The list is short (`capacity`): a linear search is fine.
        if let index = order.lastIndex(of: id) {
            order.remove(at: index)
        }
        order.append(id)
    }
}
