import AutosaveKit

/// One JSON-RPC 2.0 request, read from one frame of the control socket.
public struct RPCRequest: Sendable {
    /// Absent for a notification (no response is sent).
    public var id: JSONValue?
    public var method: String
    public var params: [JSONMember]
    /// The raw bytes that followed the request's line, as its `params.contentBytes` announced.
    public var content: [UInt8]?
}

/// A JSON-RPC error: a stable code, a message naming what was wrong, optional data.
public struct RPCError: Error, Sendable, Equatable {
    public var code: Int
    public var message: String
    public var data: JSONValue?

    public static func parse(_ message: String) -> RPCError { RPCError(code: -32700, message: message) }
    public static func invalidRequest(_ message: String) -> RPCError { RPCError(code: -32600, message: message) }
    public static func methodNotFound(_ method: String) -> RPCError {
        RPCError(code: -32601, message: "unknown method `\(method)`; known: \(RPCMethod.allCases.map(\.rawValue).joined(separator: ", "))")
    }
    public static func invalidParams(_ message: String) -> RPCError { RPCError(code: -32602, message: message) }
    /// The request was understood but refused (a bad path, a stale revision, a failed save).
    public static func refused(_ message: String, data: JSONValue? = nil) -> RPCError {
        RPCError(code: -32000, message: message, data: data)
    }
    /// The request is larger than `limits.maxRequestBytes`; the connection closes after it.
    public static func tooLarge(limit: Int) -> RPCError {
        RPCError(code: -32001, message: "request larger than limits.maxRequestBytes (\(limit) bytes); closing the connection")
    }
}

/// The methods of the control socket: the Workspace API, one to one.
public enum RPCMethod: String, CaseIterable, Sendable {
    case open, read, write, edit, patch, save, close, remove, status, subscribe, sync, shutdown, history, show, restore, forget
    case restoreDeleted, undo, changes
}

/// A request that could not be read, with its id when the id could be read.
struct RPCFailure: Error {
    var id: JSONValue?
    var error: RPCError

    init(_ id: JSONValue?, _ error: RPCError) {
        self.id = id
        self.error = error
    }
}

enum RPCCodec {
    /// Parses one line; a parse or shape error carries the request id when it could be read.
    static func decode(_ line: [UInt8]) -> Result<RPCRequest, RPCFailure> {
        line.withUnsafeBytes { decode($0) }
    }

    /// `decode` of a line the caller holds (the socket's buffer), read in place.
    static func decode(_ line: UnsafeRawBufferPointer) -> Result<RPCRequest, RPCFailure> {
        let value: JSONValue
        do { value = try JSONReader.parse(line) } catch {
            return .failure(RPCFailure(nil, .parse("invalid JSON at \(error.position): \(error.message)")))
        }
        guard case .object(let members) = value else {
            return .failure(RPCFailure(nil, .invalidRequest("a request must be a JSON object, got \(value.kindDescription)")))
        }
        let id = members.first { $0.key == "id" }?.value
        guard members.first(where: { $0.key == "jsonrpc" })?.value == .string("2.0") else {
            return .failure(RPCFailure(id, .invalidRequest("`jsonrpc` must be \"2.0\"")))
        }
        guard case .string(let method)? = members.first(where: { $0.key == "method" })?.value else {
            return .failure(RPCFailure(id, .invalidRequest("`method` must be a string")))
        }
        var params: [JSONMember] = []
        switch members.first(where: { $0.key == "params" })?.value {
        case nil, .null?: break
        case .object(let object)?: params = object
        case let other?: return .failure(RPCFailure(id, .invalidParams("`params` must be an object, got \(other.kindDescription)")))
        }
        return .success(RPCRequest(id: id, method: method, params: params))
    }

    static func response(id: JSONValue?, result: JSONValue) -> String {
        var writer = JSONWriter()
        result.write(to: &writer)
        return String(decoding: response(id: id, written: writer.bytes).joined(), as: UTF8.self)
    }

    /// `response(id:result:)` of a result whose text is written already, as the pieces of its
    /// line: the envelope's head, the result as it is, the closing brace. The socket's buffer
    /// takes them one after another, so a result of megabytes is copied once, not twice.
    static func response(id: JSONValue?, written result: [UInt8]) -> [[UInt8]] {
        var head = JSONWriter(capacity: 48)
        head.raw(#"{"jsonrpc":"2.0","id":"#)
        (id ?? .null).write(to: &head)
        head.raw(#","result":"#)
        return [head.bytes, result, [UInt8(ascii: "}")]]
    }

    static func response(id: JSONValue?, error: RPCError) -> String {
        var body = [member("code", .number(String(error.code))), member("message", .string(error.message))]
        if let data = error.data { body.append(member("data", data)) }
        return JSONValue.object([member("jsonrpc", .string("2.0")), member("id", id ?? .null), member("error", .object(body))]).jsonText
    }

    static func notification(method: String, params: JSONValue) -> String {
        JSONValue.object([member("jsonrpc", .string("2.0")), member("method", .string(method)), member("params", params)]).jsonText
    }
}

/// A member with no source position, for building JSON.
func member(_ key: String, _ value: JSONValue) -> JSONMember {
    JSONMember(key: key, value: value, position: SourcePosition(line: 0, column: 0))
}

/// How the server takes one line of the control socket: a request to perform, or an error it
/// answers at once. Public so that tools outside the module (the fuzz targets) read lines
/// through exactly the code the server runs.
public enum RPCLine: Sendable {
    /// A well-formed request, ready for its method.
    case request(RPCRequest)
    /// A line that is not a request: the complete JSON-RPC error response the server sends back
    /// (without its newline), carrying the request's id when the id could be read.
    case rejected(response: String)

    /// Reads one line (without its newline) as the server does.
    public init(_ line: [UInt8]) {
        switch RPCCodec.decode(line) {
        case .success(let request): self = .request(request)
        case .failure(let failure): self = .rejected(response: RPCCodec.response(id: failure.id, error: failure.error))
        }
    }
}
