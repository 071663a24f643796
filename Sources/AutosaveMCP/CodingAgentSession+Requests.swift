import AutosaveControl
import AutosaveKit
import ByteNames
import FoundationEssentials

/// A request the agent did not answer, told by what it means for a change it carried.
enum AgentSilence: Error {
    /// Connecting failed: nothing reached an agent, so nothing was changed.
    case notSent(cause: String)
    /// The request went and the connection ended (or failed) before the answer: the agent may
    /// have taken the change.
    case answerLost(cause: String)

    var isAnswerLost: Bool { if case .answerLost = self { true } else { false } }

    /// The transport's own words, for the log (never for a model).
    var cause: String {
        switch self {
        case .notSent(let cause), .answerLost(let cause): cause
        }
    }
}

/// Requests on the control socket: the agent's refusals become the tool's failure in its own
/// words; a socket of another user is refused before anything is sent; an agent that does not
/// answer is an `AgentSilence`, which `call` answers by finding the project's next agent.
extension CodingAgentSession {
    /// The file as the agent's buffer holds it now.
    struct CurrentFile {
        /// The path as the agent names it.
        var path: String
        var revision: Int
        /// Its text; nil when there is no file.
        var text: [UInt8]?
        var isDirty: Bool
    }

    /// The file as the agent's buffer holds it now (opening it), with the path as the agent names it.
    func current(_ path: String) async throws -> CurrentFile {
        let status = try await request(OpenMethod(path: path))
        let answer = try await send(ReadMethod(path: path, isRaw: true), content: nil)
        let exists = answer.result.content != .missing
        return CurrentFile(
            path: answer.result.path, revision: answer.result.revision, text: exists ? (answer.content ?? []) : nil, isDirty: status.isDirty)
    }

    /// Replaces `path`'s content, made on `base`, unless the buffer left `ifRevision`; returns the
    /// new revision. The change is in flight (`inFlight`) until the answer comes.
    func write(_ path: String, _ content: [UInt8], base: View, ifRevision: Int, changeID: UUID) async throws -> Int {
        // Text as text; anything else (a merge kept bytes that are not UTF-8) as base64, unchanged.
        let body: WriteMethod.Content = String(validating: content, as: UTF8.self).map { .text($0) } ?? .base64(content)
        inFlight = .text(path: path, base: base, result: content)
        let answer = try await request(
            WriteMethod(
                path: path, content: body, change: ChangeParams(changeID: changeID, ifRevision: ifRevision, client: clientName),
                createParents: true))
        let revision = answer.revision
        views[path] = View(revision: revision, text: content)
        return revision
    }

    func request<Method: ControlMethod>(_ request: Method) async throws -> Method.Result {
        try await send(request, content: nil).result
    }

    /// Sends one request and returns its answer.
    ///
    /// - Throws: `ToolFailure` with the agent's refusal, or naming a socket of another user;
    ///   `AgentSilence` when no answer came.
    func send<Method: ControlMethod>(_ request: Method, content: RequestContent?) async throws -> ControlAnswer<Method.Result> {
        let client = try await connect()
        do {
            return try await client.call(request, content: content)
        } catch ControlClientError.refused(let message) {
            throw ToolFailure(message)
        } catch {
            throw AgentSilence.answerLost(cause: "\(error)")
        }
    }

    /// A connection to the agent, once the process listening is known to be the user's own.
    ///
    /// - Throws: `ToolFailure` for a socket of another user (nothing sent, and no other agent is
    ///   looked for: a planted socket is not an agent that stopped); `AgentSilence.notSent` when
    ///   nothing listens.
    func connect() async throws -> ControlClient {
        do {
            return try await ControlClient(socketPath: socketPath)
        } catch let error as ControlClientError {
            switch error {
            case .anotherUsersSocket, .peerUnknown:
                throw ToolFailure(
                    "\(error); this tool changed nothing. The MCP server's socket is not the autosave agent of the user it runs as: "
                        + "restart `autosave mcp` as that user, in their project folder")
            default:
                throw AgentSilence.notSent(cause: error.description)
            }
        } catch {
            throw AgentSilence.notSent(cause: "\(error)")
        }
    }
}
