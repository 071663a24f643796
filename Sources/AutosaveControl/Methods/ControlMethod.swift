import AutosaveKit

/// One method of the control socket: its params, as a client writes them and as the agent reads
/// them, and its result. Both sides use the same type, so a method is added in one place (its type
/// here and its case of `RPCMethod`), and no side reads a param or a result by a key of its own.
public protocol ControlMethod: Sendable {
    /// What the agent answers.
    associatedtype Result: ControlResult
    /// The method's name on the wire.
    static var method: RPCMethod { get }
    /// The params as a client sends them. Raw content is not among them: `ControlClient` announces
    /// it (`contentBytes`) and sends it after the line.
    var params: [JSONMember] { get }
    /// Reads a request's params as the agent does, with `content` the raw bytes that followed its
    /// line (when `contentBytes` announced some).
    ///
    /// - Throws: `RPCError.invalidParams` naming the param, what was wrong with it and what it
    ///   must be; nothing has been changed yet.
    init(params: [JSONMember], content: [UInt8]?) throws(RPCError)
}

/// A method that takes no params: `status`, `subscribe`, `sync`, `shutdown`.
public protocol ParameterlessMethod: ControlMethod {
    init()
}

extension ParameterlessMethod {
    public var params: [JSONMember] { [] }

    /// Any params given are ignored, as the agent always did.
    public init(params: [JSONMember], content: [UInt8]?) { self.init() }
}

/// The result of a control socket method, as the agent writes it and a client reads it.
public protocol ControlResult: Sendable {
    /// The result as the agent sends it.
    var json: JSONValue { get }
    /// Reads the result a client received.
    ///
    /// - Throws: `RPCError.invalidParams` naming the member that is missing or of the wrong type.
    init(json: JSONValue) throws(RPCError)
    /// Reads the result where `reader` stands in the answer's text, as `init(json:)` reads its
    /// value; a large result reads itself, with no tree between.
    ///
    /// - Throws: `JSONReader.SyntaxError` when the text is malformed, or (with `init(json:)`'s
    ///   message) when the result is not what this type reads.
    init(reading reader: inout JSONReader) throws(JSONReader.SyntaxError)
}

extension ControlResult {
    public init(reading reader: inout JSONReader) throws(JSONReader.SyntaxError) {
        let value = try reader.readValue()
        do throws(RPCError) { try self.init(json: value) } catch { throw reader.failure(error.message) }
    }
}

/// A result that only says the method was carried out: `{"<key>": true}`.
public protocol ControlAcknowledgement: ControlResult {
    /// The one member of the result (`saved`, `closed`, …).
    static var key: String { get }
    init()
}

extension ControlAcknowledgement {
    public var json: JSONValue { .object([member(Self.key, .bool(true))]) }

    public init(json: JSONValue) throws(RPCError) {
        guard try RPCParams(result: json).bool(Self.key) else { throw .invalidParams("`\(Self.key)` must be true") }
        self.init()
    }
}
