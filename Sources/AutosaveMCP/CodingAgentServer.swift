import Logging
import MCP

/// `autosave mcp`'s server: the Model Context Protocol on standard input and output, its tools
/// carried out through the agent at `socketPath`.
public enum CodingAgentServer {
    /// What the model is told about these tools when it connects.
    static let instructions = """
        The files of this project are kept by autosave: people and tools edit them at the same time as you. \
        read_file shows a file as the people editing it see it, unsaved edits included. Edit through edit_file, \
        write_file or apply_patch: your edits are merged with anyone else's, and refused (nothing changed) where \
        they touch the same lines, so read the file again and redo the edit. Call changes to learn what others changed.
        """

    /// Serves one MCP client until its input ends.
    ///
    /// - Throws: when standard input or output cannot be used.
    public static func serve(socketPath: String, version: String, logger: Logger) async throws {
        let session = CodingAgentSession(socketPath: socketPath)
        await session.follow()
        let server = Server(
            name: "autosave", version: version, instructions: instructions,
            capabilities: .init(tools: .init(listChanged: false)))
        await server.withMethodHandler(ListTools.self) { _ in .init(tools: CodingAgentTools.all) }
        await server.withMethodHandler(CallTool.self) { params in await session.call(params.name, params.arguments ?? [:]) }
        try await server.start(transport: StandardIOLines(logger: logger)) { client, _ in
            session.name(after: client.name)
            logger.info("mcp-client", metadata: ["name": "\(client.name)", "version": "\(client.version)"])
        }
        await server.waitUntilCompleted()
        await server.stop()
        await session.stop()
    }
}
