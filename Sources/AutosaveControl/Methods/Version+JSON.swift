import AutosaveHistory
import AutosaveKit

/// A version on the socket: `{version, path, time, timeMs, who, kind, size?, added?, removed?,
/// from?, program?, pid?, parent?}`. `time` is RFC 3339 (UTC) for people and scripts, `timeMs` the same
/// moment as a client reads it back; members absent are unknown or do not apply. As a row
/// (`history`'s `form: "rows"`), the same values but `time`, in that order, `null` for absent
/// ones, and trailing `null`s left out.
extension Version {
    /// One member's value as it is written.
    enum Member {
        case text(String)
        case integer(Int64)
        /// The version's moment, as RFC 3339 (in an object only: a row has `timeMs`).
        case timestamp
    }

    /// The members in the order they are written, nil for one absent: the one list that objects
    /// and rows, written as values or as text, all follow.
    func forEachMember(_ body: (StaticString, Member?) -> Void) {
        body("version", .integer(id))
        body("path", .text(path))
        body("time", .timestamp)
        body("timeMs", .integer(time))
        body("who", .text(who))
        body("kind", .text(kind.rawValue))
        body("size", size.map { .integer(Int64($0)) })
        body("added", added.map { .integer(Int64($0)) })
        body("removed", removed.map { .integer(Int64($0)) })
        body("from", from.map { .text($0) })
        body("program", program.map { .text($0) })
        body("pid", pid.map { .integer(Int64($0)) })
        // Last: a row's columns only ever grow at the end, and older clients pass over the rest.
        body("parent", parent.map { .integer($0) })
    }

    /// A member as a value.
    private func value(_ member: Member) -> JSONValue {
        switch member {
        case .text(let text): .string(text)
        case .integer(let number): .number(String(number))
        case .timestamp: .string(timestamp)
        }
    }

    /// A member's value written as text.
    private func write(_ member: Member, to writer: inout JSONWriter) {
        switch member {
        case .text(let text): writer.string(text)
        case .integer(let number): writer.number(number)
        case .timestamp: writer.timestamp(time)
        }
    }

    public var json: JSONValue {
        var members: [JSONMember] = []
        forEachMember { key, member in
            if let member { members.append(AutosaveControl.member("\(key)", value(member))) }
        }
        return .object(members)
    }

    /// The version as a row: `[version, path, timeMs, who, kind, size, added, removed, from,
    /// program, pid, parent]`, `null` where absent, trailing `null`s left out.
    public var row: JSONValue {
        var items: [JSONValue] = []
        var nulls = 0
        forEachMember { _, member in
            guard let member else { return nulls += 1 }
            guard case .timestamp = member else {
                items += repeatElement(.null, count: nulls) + [value(member)]
                return nulls = 0
            }
        }
        return .array(items)
    }

    /// `json`'s text, written straight from the fields: no member, no String of a number.
    public func write(to writer: inout JSONWriter) {
        writer.raw("{")
        var isFirst = true
        forEachMember { key, member in
            guard let member else { return }
            writer.raw(isFirst ? "\"" as StaticString : ",\"")
            isFirst = false
            // The keys are the literals above: nothing in them to escape.
            writer.raw(key)
            writer.raw("\":")
            write(member, to: &writer)
        }
        writer.raw("}")
    }

    /// `row`'s text, written straight from the fields.
    public func writeRow(to writer: inout JSONWriter) {
        writer.raw("[")
        var isFirst = true
        var nulls = 0
        forEachMember { _, member in
            guard let member else { return nulls += 1 }
            if case .timestamp = member { return }
            if !isFirst { writer.raw(",") }
            isFirst = false
            for _ in 0..<nulls { writer.raw("null,") }
            nulls = 0
            write(member, to: &writer)
        }
        writer.raw("]")
    }

    /// `versions` as a JSON array of objects, each written by `write(to:)`.
    public static func write(_ versions: [Version], to writer: inout JSONWriter) {
        writer.raw("[")
        for (index, version) in versions.enumerated() {
            if index > 0 { writer.raw(",") }
            version.write(to: &writer)
        }
        writer.raw("]")
    }

    /// Reads a version as `json` writes it, through its text (`init(reading:)`).
    ///
    /// - Throws: `RPCError.invalidParams` naming the member missing or of the wrong type.
    public init(json: JSONValue) throws(RPCError) {
        self = try json.read { reader throws(JSONReader.SyntaxError) in try Version(reading: &reader) }
    }

    /// Reads a version where `reader` stands, as `json` writes it: members in any order, `null`
    /// as absent, others than these passed over.
    ///
    /// - Throws: `JSONReader.SyntaxError` naming the member missing or of the wrong type.
    public init(reading reader: inout JSONReader) throws(JSONReader.SyntaxError) {
        var fields = ReadFields()
        try reader.readObject { reader, key, position throws(JSONReader.SyntaxError) in
            guard let column = Self.rowColumns.firstIndex(of: key) else { return try reader.skipValue() }
            try fields.read(column: column, from: &reader, at: position)
        }
        self = try fields.version(reader)
    }

    /// Reads a version where `reader` stands, as `row` writes it: items past the columns this
    /// code knows (an agent's newer ones) are passed over.
    ///
    /// - Throws: `JSONReader.SyntaxError` naming the member missing or of the wrong type.
    public init(readingRow reader: inout JSONReader) throws(JSONReader.SyntaxError) {
        var fields = ReadFields()
        var column = 0
        try reader.readArray { reader throws(JSONReader.SyntaxError) in
            defer { column += 1 }
            guard column < Self.rowColumns.count else { return try reader.skipValue() }
            try fields.read(column: column, from: &reader, at: reader.position)
        }
        self = try fields.version(reader)
    }

    /// The names of a row's items, in order: `forEachMember`'s, without `time`.
    static let rowColumns: [String] = {
        let full = Version(
            id: 0, path: "", time: 0, who: "", kind: .saved, size: 0, from: "", program: "", pid: 0, digest: nil, added: 0, removed: 0,
            parent: 0)
        var names: [String] = []
        full.forEachMember { key, member in
            if case .timestamp? = member { return }
            names.append("\(key)")
        }
        return names
    }()
}

/// A version's members as they are read, in any order; `version` checks they make one.
private struct ReadFields {
    var id: Int64?, time: Int64?, size: Int64?, pid: Int64?, added: Int64?, removed: Int64?, parent: Int64?
    var path: String?, who: String?, kindName: String?, from: String?, program: String?

    /// Reads the value of the member in `column` of `Version.rowColumns` (at `position`, for the
    /// error), `null` as absent. By number: a row's items are matched to members without
    /// comparing a name each.
    mutating func read(column: Int, from reader: inout JSONReader, at position: SourcePosition) throws(JSONReader.SyntaxError) {
        if reader.readNull() { return }
        do throws(JSONReader.SyntaxError) {
            switch column {
            case 0: id = try reader.readInteger()
            case 1: path = try reader.readString()
            case 2: time = try reader.readInteger()
            case 3: who = try reader.readString()
            case 4: kindName = try reader.readString()
            case 5: size = try reader.readInteger()
            case 6: added = try reader.readInteger()
            case 7: removed = try reader.readInteger()
            case 8: from = try reader.readString()
            case 9: program = try reader.readString()
            case 10: pid = try reader.readInteger()
            case 11: parent = try reader.readInteger()
            default: try reader.skipValue()
            }
        } catch {
            let name = column < Version.rowColumns.count ? Version.rowColumns[column] : "\(column)"
            throw JSONReader.SyntaxError(message: "`\(name)`: \(error.message)", position: position)
        }
    }

    /// The version the members make.
    ///
    /// - Throws: `JSONReader.SyntaxError` at `reader` naming a member missing, or a kind unknown.
    func version(_ reader: JSONReader) throws(JSONReader.SyntaxError) -> Version {
        func missing(_ key: String, _ kind: String) -> JSONReader.SyntaxError { reader.failure("missing `\(key)` (\(kind))") }
        guard let id else { throw missing("version", "a whole number") }
        guard let time else { throw missing("timeMs", "a whole number") }
        guard let path else { throw missing("path", "a string") }
        guard let who else { throw missing("who", "a string") }
        guard let kindName else { throw missing("kind", "a string") }
        guard let kind = VersionKind(rawValue: kindName) else { throw reader.failure("`kind` is not a kind of version: \(kindName)") }
        return Version(
            id: id, path: path, time: time, who: who, kind: kind, size: size.map { Int(truncatingIfNeeded: $0) }, from: from,
            program: program, pid: pid.map { Int32(truncatingIfNeeded: $0) }, digest: nil,
            added: added.map { Int(truncatingIfNeeded: $0) }, removed: removed.map { Int(truncatingIfNeeded: $0) }, parent: parent)
    }
}

extension JSONValue {
    /// Reads the value's text with `body`: a type that reads itself from text reads a value the
    /// same way, so it has one reader, not two.
    ///
    /// - Throws: `RPCError.invalidParams` with what `body` found wrong.
    func read<Value>(_ body: (inout JSONReader) throws(JSONReader.SyntaxError) -> Value) throws(RPCError) -> Value {
        var writer = JSONWriter()
        write(to: &writer)
        do throws(JSONReader.SyntaxError) {
            return try writer.bytes.withUnsafeBytes { bytes in Result { () throws(JSONReader.SyntaxError) in try JSONReader.read(bytes, body) } }.get()
        } catch {
            throw .invalidParams(error.message)
        }
    }
}
