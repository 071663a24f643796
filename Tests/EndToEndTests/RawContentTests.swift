import AutosaveTestKit
import Foundation
import Testing

/// Content sent raw after a request's line (`contentBytes`) and read back raw (`"raw": true`):
/// any bytes at all, pipelined with other requests; and a client that announces too much, a bad
/// length, or hangs up half way writes nothing and leaves the agent serving everyone else.
@Suite struct RawContentTests {
    /// Bytes no line framing could carry: newlines, braces that look like requests, NUL, bytes
    /// that are not UTF-8.
    static let awkward: [UInt8] = Array("line\n{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"shutdown\"}\n".utf8) + [0, 0xFF, 0xC3, 10, 10]

    func header(_ id: Int, _ method: String, _ params: String) -> [UInt8] {
        Array(#"{"jsonrpc":"2.0","id":\#(id),"method":"\#(method)","params":{\#(params)}}"#.utf8) + [10]
    }

    @Test func rawContentGoesInAndComesBackByteForByteBetweenOtherRequests() async throws {
        let project = try TemporaryDirectory()
        let agent = try await AgentProcess.started(on: project, config: #"{"autosave": {"delayMs": 60000, "maxDelayMs": 60000}}"#)
        let socket = project.url(".autosave/agent.sock")
        let stream = header(1, "write", #""path":"a.bin","contentBytes":\#(Self.awkward.count)"#) + Self.awkward
            + header(2, "read", #""path":"a.bin","raw":true"#)
            + header(3, "read", #""path":"a.bin""#)
            + header(4, "status", "")
        let answers = try RawAnswers(try SocketScript.exchange(socket: socket, bytes: stream))
        #expect(answers.messages.count == 4, "\(answers.messages.map(\.line))")
        #expect(answers.messages[0].line.contains(#""revision":1"#))
        #expect(answers.messages[1].line.contains(#""contentBytes":\#(Self.awkward.count)"#))
        #expect(answers.messages[1].content == Self.awkward, "read raw: the bytes written, exactly")
        #expect(answers.messages[2].line.contains(#""contentBase64""#), "read without raw still answers in JSON")
        #expect(answers.messages[3].line.contains(#""result""#), "the agent still serves after the raw bytes")
        #expect(try await AgentProcess.client(["save", "a.bin"], in: project).status == 0)
        #expect(FileManager.default.contents(atPath: project.url("a.bin")) == Data(Self.awkward))
        agent.signal(SIGTERM)
        #expect(await agent.exitStatus() == 0)
    }

    @Test func anAnnouncementOverTheLimitIsRefusedAndWritesNothing() async throws {
        let project = try TemporaryDirectory()
        let agent = try await AgentProcess.started(on: project, config: #"{"limits": {"maxRequestBytes": 4096}}"#)
        let socket = project.url(".autosave/agent.sock")
        let stream = header(5, "write", #""path":"big.txt","contentBytes":1000000"#) + [UInt8](repeating: 65, count: 8192)
        let answers = try RawAnswers(try SocketScript.exchange(socket: socket, bytes: stream))
        #expect(answers.messages.count == 1)
        #expect(answers.messages.first?.line.contains(#""id":5"#) == true)
        #expect(answers.messages.first?.line.contains(#""code":-32001"#) == true)
        _ = try await agent.stderrLines.first(timeout: .seconds(30), "request-too-large") {
            $0.contains(" request-too-large ") && $0.contains("contentBytes=1000000")
        }
        #expect(!FileManager.default.fileExists(atPath: project.url("big.txt")))
        #expect(try await AgentProcess.client(["status"], in: project).status == 0, "the agent still serves")
        agent.signal(SIGTERM)
        #expect(await agent.exitStatus() == 0)
    }

    @Test func aClientThatHangsUpInsideItsContentWritesNothing() async throws {
        let project = try TemporaryDirectory()
        try project.write("a.txt", "before\n")
        let agent = try await AgentProcess.started(on: project, config: #"{"autosave": {"delayMs": 100}}"#)
        let socket = project.url(".autosave/agent.sock")
        let stream = header(6, "write", #""path":"a.txt","contentBytes":100"#) + Array("only ten b".utf8)
        let answers = try RawAnswers(try SocketScript.exchange(socket: socket, bytes: stream))
        #expect(answers.messages.count == 1)
        #expect(answers.messages.first?.line.contains("ended 10 bytes into the 100 raw bytes") == true)
        let cat = try await AgentProcess.client(["cat", "a.txt"], in: project)
        #expect(cat.status == 0 && cat.stdout == "before", "the buffer is untouched: \(cat)")
        #expect(try project.read("a.txt") == "before\n")
        agent.signal(SIGTERM)
        #expect(await agent.exitStatus() == 0)
        #expect(try project.read("a.txt") == "before\n", "nothing half-sent was saved on the way out")
    }

    /// The last line announces bytes and the client ends its side: no content came, so nothing
    /// is written (an empty file would have been acknowledged).
    @Test func anAnnouncementWithNothingAfterItWritesNothing() async throws {
        let project = try TemporaryDirectory()
        try project.write("a.txt", "kept\n")
        let agent = try await AgentProcess.started(on: project)
        let socket = project.url(".autosave/agent.sock")
        let line = Array(#"{"jsonrpc":"2.0","id":3,"method":"write","params":{"path":"a.txt","contentBytes":5}}"#.utf8)
        let answers = try RawAnswers(try SocketScript.exchange(socket: socket, bytes: line))
        #expect(answers.messages.first?.line.contains("ended 0 bytes into the 5 raw bytes") == true, "\(answers.messages.map(\.line))")
        #expect(try await AgentProcess.client(["cat", "a.txt"], in: project).stdout == "kept")
        agent.signal(SIGTERM)
        #expect(await agent.exitStatus() == 0)
        #expect(try project.read("a.txt") == "kept\n")
    }

    @Test func aLengthThatIsNotANumberEndsTheConnection() async throws {
        let project = try TemporaryDirectory()
        let agent = try await AgentProcess.started(on: project)
        let socket = project.url(".autosave/agent.sock")
        // What follows the bad line cannot be told from content: it is not taken as a request.
        let stream = header(7, "write", #""path":"a.txt","contentBytes":"3""#) + Array("abc\n".utf8)
            + header(8, "write", #""path":"b.txt","content":"never""#)
        let answers = try RawAnswers(try SocketScript.exchange(socket: socket, bytes: stream))
        #expect(answers.messages.count == 1)
        #expect(answers.messages.first?.line.contains(#""code":-32602"#) == true)
        #expect(answers.messages.first?.line.contains("`contentBytes` must be a whole number of bytes") == true)
        #expect(!FileManager.default.fileExists(atPath: project.url("a.txt")))
        let cat = try await AgentProcess.client(["cat", "b.txt"], in: project)
        #expect(cat.status == 1 && cat.stderr.contains("b.txt does not exist"), "b.txt was never written: \(cat)")
        agent.signal(SIGTERM)
        #expect(await agent.exitStatus() == 0)
    }
}

/// A client's view of raw answers: each line, and the `result.contentBytes` bytes after it,
/// read with Foundation's JSON parser rather than the agent's own framing.
struct RawAnswers {
    struct Message {
        var line: String
        var content: [UInt8]?
    }

    var messages: [Message] = []

    init(_ received: [UInt8]) throws {
        var rest = received[...]
        while let newline = rest.firstIndex(of: 10) {
            let line = String(decoding: rest[..<newline], as: UTF8.self)
            rest = rest[(newline + 1)...]
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            var content: [UInt8]?
            if let count = (object?["result"] as? [String: Any])?["contentBytes"] as? Int {
                content = Array(rest.prefix(count))
                rest = rest.dropFirst(count)
            }
            messages.append(Message(line: line, content: content))
        }
    }
}
