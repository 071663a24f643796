import AutosaveKit
import Logging

/// `autosave mcp`'s server: the Model Context Protocol (JSON-RPC 2.0, one message per line) on
/// standard input and output, its tools carried out through the project's agent.
///
/// Requests are answered one at a time, in order: a model's tool calls never interleave, and
/// every request read before the input ended is answered before `serve` returns. No tool result
/// is longer than `ResultBound.bytes`.
public enum CodingAgentServer {
    /// The protocol versions spoken, newest first.
    static let protocolVersions = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"]

    /// What the model is told about these tools when it connects.
    static let instructions = """
        The files of this project are kept by autosave: people and tools edit them at the same time as you. \
        read_file shows a file as the people editing it see it, unsaved edits included. Edit through edit_file, \
        write_file or apply_patch: your edits are merged with anyone else's, and refused (nothing changed) where \
        they touch the same lines, so read the file again and redo the edit. Call changes to learn what others changed.
        """

    /// Serves one MCP client until its input ends (or the task is cancelled), through the agent at
    /// `socketPath` and, when that one stops answering, the one `agents` finds or starts.
    public static func serve(socketPath: String, agents: any AgentFinder, version: String, logger: Logger) async {
        let session = CodingAgentSession(socketPath: socketPath, agents: agents, logger: logger)
        try? await session.follow()
        for await line in StandardStreams.lines() {
            if Task.isCancelled { break }
            guard let answer = await answer(line, session: session, version: version, logger: logger) else { continue }
            if !StandardStreams.write(line: answer.jsonText) {
                logger.error("mcp-failed", metadata: ["error": "standard output is closed", "next": "stopping"])
                break
            }
        }
        await session.stop()
    }

    /// The answer to one message (nil for a notification or a response).
    static func answer(_ line: [UInt8], session: CodingAgentSession, version: String, logger: Logger) async -> JSONValue? {
        let message: JSONValue
        do {
            message = try JSONReader.parse(line)
        } catch {
            return failure(id: .null, code: -32700, "not JSON: \(error.message)")
        }
        guard case .object = message, let method = message["method"]?.stringValue else {
            // A response to nothing we asked, or not a request at all.
            return message["id"] == nil ? nil : failure(id: message["id"] ?? .null, code: -32600, "a request needs a `method`")
        }
        guard let id = message["id"] else { return nil }  // a notification: initialized, cancelled
        let params = message["params"]
        switch method {
        case "initialize":
            let asked = params?["protocolVersion"]?.stringValue ?? ""
            let client = params?["clientInfo"]?["name"]?.stringValue ?? "client"
            session.name(after: client)
            logger.info("mcp-client", metadata: ["name": "\(client)", "protocol": "\(asked)"])
            return result(id: id, .object([
                field("protocolVersion", .string(protocolVersions.contains(asked) ? asked : protocolVersions[0])),
                field("capabilities", .object([field("tools", .object([field("listChanged", .bool(false))]))])),
                field("serverInfo", .object([field("name", .string("autosave")), field("version", .string(version))])),
                field("instructions", .string(instructions)),
            ]))
        case "ping":
            return result(id: id, .object([]))
        case "tools/list":
            return result(id: id, .object([field("tools", .array(CodingAgentTools.all))]))
        case "tools/call":
            guard let name = params?["name"]?.stringValue else {
                return failure(id: id, code: -32602, "tools/call needs `name`, the tool to call")
            }
            let (text, isError) = await session.call(name, params?["arguments"])
            return result(id: id, .object([
                field("content", .array([.object([field("type", .string("text")), field("text", .string(text))])])),
                field("isError", .bool(isError)),
            ]))
        default:
            return failure(id: id, code: -32601, "method not found: \(method) (this server offers tools only)")
        }
    }

    private static func result(id: JSONValue, _ value: JSONValue) -> JSONValue {
        .object([field("jsonrpc", .string("2.0")), field("id", id), field("result", value)])
    }

    private static func failure(id: JSONValue, code: Int, _ message: String) -> JSONValue {
        .object([
            field("jsonrpc", .string("2.0")), field("id", id),
            field("error", .object([field("code", .number(String(code))), field("message", .string(message))])),
        ])
    }
}
