/// A dictionary keyed by paths compared byte for byte (`PathKey`), read and written with plain
/// `String` paths: NFC and NFD spellings of a name are two entries, as they are two files.
public struct PathMap<Value>: Sequence {
    public private(set) var storage: [PathKey: Value] = [:]

    public init() {}

    public subscript(path: String) -> Value? {
        get { storage[PathKey(path)] }
        set { storage[PathKey(path)] = newValue }
    }

    public subscript(path: String, default value: @autoclosure () -> Value) -> Value {
        get { storage[PathKey(path), default: value()] }
        _modify { yield &storage[PathKey(path), default: value()] }
    }

    @discardableResult
    public mutating func updateValue(_ value: Value, forKey path: String) -> Value? {
        storage.updateValue(value, forKey: PathKey(path))
    }

    @discardableResult
    public mutating func removeValue(forKey path: String) -> Value? { storage.removeValue(forKey: PathKey(path)) }

    public mutating func removeAll() { storage.removeAll() }

    public mutating func reserveCapacity(_ count: Int) { storage.reserveCapacity(count) }

    /// The paths, in no particular order.
    public var keys: [String] { storage.keys.map(\.text) }

    /// The paths in byte order (the same order every run).
    public var sortedKeys: [String] { storage.keys.sorted().map(\.text) }

    public var values: Dictionary<PathKey, Value>.Values { storage.values }

    public var count: Int { storage.count }

    public var isEmpty: Bool { storage.isEmpty }

    public func makeIterator() -> some IteratorProtocol<(key: String, value: Value)> {
        storage.lazy.map { (key: $0.key.text, value: $0.value) }.makeIterator()
    }
}

extension PathMap: Sendable where Value: Sendable {}

/// A set of paths compared byte for byte (`PathKey`).
public struct PathSet: Sequence, Sendable, Equatable, ExpressibleByArrayLiteral {
    public private(set) var storage: Set<PathKey> = []

    public init() {}

    public init<S: Sequence>(_ paths: S) where S.Element == String { storage = Set(paths.map { PathKey($0) }) }

    public init(arrayLiteral paths: String...) { self.init(paths) }

    public func contains(_ path: String) -> Bool { storage.contains(PathKey(path)) }

    @discardableResult
    public mutating func insert(_ path: String) -> Bool { storage.insert(PathKey(path)).inserted }

    @discardableResult
    public mutating func remove(_ path: String) -> Bool { storage.remove(PathKey(path)) != nil }

    public mutating func removeAll() { storage.removeAll() }

    public var count: Int { storage.count }

    public var isEmpty: Bool { storage.isEmpty }

    /// The paths in byte order.
    public var sorted: [String] { storage.sorted().map(\.text) }

    public func makeIterator() -> some IteratorProtocol<String> { storage.lazy.map(\.text).makeIterator() }
}
