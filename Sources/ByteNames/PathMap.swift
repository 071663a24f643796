/// A dictionary keyed by paths compared byte for byte (`PathKey`), read and written with plain
/// `String` paths: NFC and NFD spellings of a name are two entries, as they are two files.
public struct PathMap<Value>: Sequence, ExpressibleByDictionaryLiteral {
    /// The entries, keyed by bytes.
    public private(set) var storage: [PathKey: Value] = [:]

    /// An empty map.
    public init() {}

    /// A map of `entries`; a later spelling of the same bytes replaces an earlier one.
    public init(dictionaryLiteral entries: (String, Value)...) {
        for (path, value) in entries { storage[PathKey(path)] = value }
    }

    /// The value for `path` (byte for byte); nil sets none.
    public subscript(path: String) -> Value? {
        get { storage[PathKey(path)] }
        set { storage[PathKey(path)] = newValue }
    }

    /// The value for `path`, `value` when there is none (in place, as `Dictionary`'s).
    public subscript(path: String, default value: @autoclosure () -> Value) -> Value {
        get { storage[PathKey(path), default: value()] }
        _modify { yield &storage[PathKey(path), default: value()] }
    }

    /// Sets the value for `path`; returns the one it replaced.
    @discardableResult
    public mutating func updateValue(_ value: Value, forKey path: String) -> Value? {
        storage.updateValue(value, forKey: PathKey(path))
    }

    /// Removes `path`'s entry; returns its value.
    @discardableResult
    public mutating func removeValue(forKey path: String) -> Value? { storage.removeValue(forKey: PathKey(path)) }

    /// Removes every entry.
    public mutating func removeAll() { storage.removeAll() }

    /// Takes in `other`'s entries; `combine` picks the value where both have one.
    public mutating func merge(_ other: PathMap<Value>, uniquingKeysWith combine: (Value, Value) -> Value) {
        storage.merge(other.storage, uniquingKeysWith: combine)
    }

    /// The entries whose value passes `isIncluded`.
    public func filter(_ isIncluded: (Value) -> Bool) -> PathMap<Value> {
        var result = PathMap<Value>()
        result.storage = storage.filter { isIncluded($0.value) }
        return result
    }

    /// The same entries with each path and value transformed; a later spelling of the same
    /// bytes replaces an earlier one.
    public func map<NewValue>(_ transform: (String, Value) -> (String, NewValue)) -> PathMap<NewValue> {
        var result = PathMap<NewValue>()
        for (key, value) in storage {
            let (path, mapped) = transform(key.text, value)
            result[path] = mapped
        }
        return result
    }

    /// Makes room for `count` entries.
    public mutating func reserveCapacity(_ count: Int) { storage.reserveCapacity(count) }

    /// The paths, in no particular order.
    public var keys: [String] { storage.keys.map(\.text) }

    /// The paths in byte order (the same order every run).
    public var sortedKeys: [String] { storage.keys.sorted().map(\.text) }

    /// The values, in no particular order.
    public var values: Dictionary<PathKey, Value>.Values { storage.values }

    /// How many entries.
    public var count: Int { storage.count }

    /// Whether there is none.
    public var isEmpty: Bool { storage.isEmpty }

    /// The entries as `(key: path, value:)`, in no particular order.
    public func makeIterator() -> some IteratorProtocol<(key: String, value: Value)> {
        storage.lazy.map { (key: $0.key.text, value: $0.value) }.makeIterator()
    }
}

extension PathMap: Sendable where Value: Sendable {}

extension PathMap: Equatable where Value: Equatable {}

/// A set of paths compared byte for byte (`PathKey`).
public struct PathSet: Sequence, Sendable, Equatable, ExpressibleByArrayLiteral {
    /// The paths, as bytes.
    public private(set) var storage: Set<PathKey> = []

    /// An empty set.
    public init() {}

    /// The set of `paths`.
    public init<S: Sequence>(_ paths: S) where S.Element == String { storage = Set(paths.map { PathKey($0) }) }

    /// The set of `paths`.
    public init(arrayLiteral paths: String...) { self.init(paths) }

    /// Whether `path` is in the set, byte for byte.
    public func contains(_ path: String) -> Bool { storage.contains(PathKey(path)) }

    /// Adds `path`; whether it was not there yet.
    @discardableResult
    public mutating func insert(_ path: String) -> Bool { storage.insert(PathKey(path)).inserted }

    /// Removes `path`; whether it was there.
    @discardableResult
    public mutating func remove(_ path: String) -> Bool { storage.remove(PathKey(path)) != nil }

    /// Removes every path.
    public mutating func removeAll() { storage.removeAll() }

    /// Adds every path of `other`.
    public mutating func formUnion(_ other: PathSet) { storage.formUnion(other.storage) }

    /// How many paths.
    public var count: Int { storage.count }

    /// Whether there is none.
    public var isEmpty: Bool { storage.isEmpty }

    /// The paths in byte order.
    public var sorted: [String] { storage.sorted().map(\.text) }

    /// The paths, in no particular order.
    public func makeIterator() -> some IteratorProtocol<String> { storage.lazy.map(\.text).makeIterator() }
}
