import AutosaveKit
import NIOCore

/// One message from the agent, as a client takes it: read straight from the frame's line, the
/// result by its own type (`ControlResult.init(reading:)`), so a large answer is never a tree.
enum IncomingMessage<Result: ControlResult> {
    /// The answer to the request.
    case answer(Result)
    /// The agent's error.
    case refusal(ControlClientError)
    /// A notification (`event`, `dropped`) with its params.
    case notification(method: String, params: JSONValue)
    /// Anything else (a value that is not an object, or an object with none of these).
    case other

    /// Reads the frame's line.
    ///
    /// - Throws: `ControlClientError.unreadableAnswer` when the result is not what `Result`
    ///   reads; `JSONReader.SyntaxError` when the line is not JSON.
    init(_ frame: ControlFrame, answering method: RPCMethod) throws {
        var result: Result?
        var unreadable: JSONReader.SyntaxError?
        var error: JSONValue?
        var notice: String?
        var params: JSONValue?
        do throws(JSONReader.SyntaxError) {
            try frame.line.withUnsafeReadableBytes { line in
                Swift.Result { () throws(JSONReader.SyntaxError) in
                    try JSONReader.read(line) { reader throws(JSONReader.SyntaxError) in
                        guard reader.isAtObject else { return _ = try reader.readValue() }
                        try reader.readObject { reader, key, _ throws(JSONReader.SyntaxError) in
                            switch key {
                            case "result":
                                do throws(JSONReader.SyntaxError) { result = try Result(reading: &reader) } catch {
                                    unreadable = error
                                    throw error
                                }
                            case "error": error = try reader.readValue()
                            case "method": notice = try reader.readValue().stringValue
                            case "params": params = try reader.readValue()
                            default: try reader.skipValue()
                            }
                        }
                    }
                }
            }.get()
        } catch {
            if let unreadable { throw ControlClientError.unreadableAnswer(method: method.rawValue, reason: unreadable.message) }
            throw error
        }
        if case .object(let body)? = error {
            let message = body.first { $0.key == "message" }?.value.stringValue
            self = .refusal(.refused(message ?? "error"))
        } else if let result {
            self = .answer(result)
        } else if let params {
            self = .notification(method: notice ?? "", params: params)
        } else {
            self = .other
        }
    }
}
