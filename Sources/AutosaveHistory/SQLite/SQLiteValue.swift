/// A value to bind to a statement's parameter, so a statement's arguments can be passed as one list.
public enum SQLiteValue: Sendable, Equatable {
    case integer(Int64)
    case text(String)
    case blob([UInt8])
    case null

    /// An integer, or NULL for nil.
    public init(_ value: Int64?) { self = value.map { .integer($0) } ?? .null }

    /// Text, or NULL for nil.
    public init(_ value: String?) { self = value.map { .text($0) } ?? .null }
}

extension SQLiteStatement {
    /// Binds `values` to parameters 1, 2, … in order.
    ///
    /// - Throws: `SQLiteError.bind` as the single-value `bind` methods do.
    public func bind(_ values: [SQLiteValue]) throws(SQLiteError) {
        for (offset, value) in values.enumerated() {
            let index = Int32(offset + 1)
            switch value {
            case .integer(let integer): try bind(integer, at: index)
            case .text(let text): try bind(text, at: index)
            case .blob(let bytes): try bind(bytes, at: index)
            case .null: try bindNull(at: index)
            }
        }
    }
}
