import AutosaveKit
@testable import AutosaveMCP
import AutosaveTestKit
import Foundation
import Testing

/// A coding agent's tools never talk to a socket of another user (issue 32, part 3).
@Suite(.enabled(if: OtherUser.isAvailable, "skipped: needs root, /usr/bin/setpriv and the user nobody (group nogroup) to act as another user"))
struct OtherUsersSocketTests {
    /// A tool call whose socket turns out to be another user's fails saying so, with nothing sent
    /// and nothing changed. Before the fix the request went to the planted server, whose fake
    /// answer the tool reported as the project's status.
    @Test func aToolCallAtAnotherUsersSocketFailsSayingWhoseItIs() async throws {
        let base = try TemporaryDirectory()
        chmod(base.path, 0o755)
        let socket = try OtherUser.directory(base.url("theirs")) + "/agent.sock"
        let planted = try await PlantedServer(socket: socket)
        let session = CodingAgentSession(socketPath: socket)
        let (text, isError) = await session.call("status", nil)
        #expect(isError)
        #expect(text.contains("refused the socket \(socket): the process listening there (pid \(planted.process.processIdentifier)) runs as user nobody"), "\(text)")
        #expect(text.contains("nothing was sent to it; this tool changed nothing"), "\(text)")
        #expect(try await planted.firstConnection() == 0, "the planted server received nothing")
    }
}
