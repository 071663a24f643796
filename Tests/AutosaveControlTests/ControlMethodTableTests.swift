@testable import AutosaveControl
import AutosaveHistory
import AutosaveKit
import FoundationEssentials
import Testing

/// The method table: what a client writes is what the agent reads, the wire text stays as
/// docs/protocol.md has it, and a result reads back as it was written.
@Suite struct ControlMethodTableTests {
    /// The params as the agent reads them after a client wrote them (through the wire's text).
    func roundTrip<Method: ControlMethod>(_ request: Method, content: [UInt8]? = nil) throws -> Method {
        let line = JSONValue.object(request.params).jsonText
        guard case .object(let members) = try JSONReader.parse(Array(line.utf8)) else { throw RPCError.invalidParams("not an object") }
        return try Method(params: members + (content.map { [member("contentBytes", .number(String($0.count)))] } ?? []), content: content)
    }

    func text(_ params: [JSONMember]) -> String { JSONValue.object(params).jsonText }

    @Test func writeParamsReadBackAndKeepTheirWireText() throws {
        let id = UUID()
        let request = WriteMethod(
            path: "a.txt", content: .text("hi"), change: ChangeParams(changeID: id, ifRevision: 3, client: "cli"), createParents: true)
        #expect(text(request.params) == #"{"path":"a.txt","content":"hi","changeId":"\#(id.uuidString)","ifRevision":3,"client":"cli","createParents":true}"#)
        let read = try roundTrip(request)
        #expect(read.path == "a.txt" && read.bytes == Array("hi".utf8) && read.change == request.change && read.createParents)
        #expect(try roundTrip(WriteMethod(path: "b", content: .base64([0xFF, 0]))).bytes == [0xFF, 0])
        #expect(try roundTrip(WriteMethod(path: "b", content: .raw(bytes: nil)), content: [1, 2, 3]).bytes == [1, 2, 3])
        // Not given: the defaults the agent always had.
        let bare = try WriteMethod(params: [member("path", .string("c")), member("content", .string(""))], content: nil)
        #expect(bare.change.clientName == "client" && bare.change.changeID == nil && !bare.createParents)
    }

    @Test func paramErrorsNameTheField() {
        #expect(throws: RPCError.invalidParams("missing `path` (a string)")) { try CloseMethod(params: [], content: nil) }
        #expect(throws: RPCError.invalidParams("`ifRevision` must be a whole number, got \"3\"")) {
            try RemoveMethod(params: [member("path", .string("a")), member("ifRevision", .string("3"))], content: nil)
        }
        #expect(throws: RPCError.invalidParams("give one of `content`, `contentBase64` and `contentBytes`, not `content` and `contentBase64`")) {
            try WriteMethod(
                params: [member("path", .string("a")), member("content", .string("")), member("contentBase64", .string(""))], content: nil)
        }
    }

    @Test func editOpenPatchSaveReadBack() throws {
        let edit = TextEdit(range: TextRange(start: TextPosition(line: 0, character: 1), end: TextPosition(line: 2, character: 0)), text: Array("é".utf8))
        let request = EditMethod(path: "a", edits: [edit], positionEncoding: .utf8, change: ChangeParams(client: "mcp"))
        #expect(text(request.params) == #"{"path":"a","positionEncoding":"utf-8","edits":[{"start":{"line":0,"character":1},"end":{"line":2,"character":0},"text":"é"}],"client":"mcp"}"#)
        let read = try roundTrip(request)
        #expect(read.edits == [edit] && read.positionEncoding == .utf8 && read.change.clientName == "mcp")

        #expect(try roundTrip(OpenMethod(path: "a")).keep == nil)
        #expect(try roundTrip(OpenMethod(path: "a", keep: .some(nil))).keep == .some(nil))
        #expect(try roundTrip(OpenMethod(path: "a", keep: .buffer)).keep == .buffer)

        let patch = try roundTrip(PatchMethod(diff: .text("--- a\n"), isCheck: true, change: ChangeParams(ifRevision: 2)))
        #expect(patch.bytes == Array("--- a\n".utf8) && patch.isCheck && patch.change.ifRevision == 2)

        #expect(try roundTrip(SaveMethod(.all)).target == .all)
        #expect(try roundTrip(SaveMethod(.paths(["a", "b"]))).target == .paths(["a", "b"]))
        #expect(try roundTrip(SaveMethod(.paths([]))).target == .paths([]))
        // `all: true` wins without reading `paths`; no `paths` saves every buffer.
        #expect(try SaveMethod(params: [member("all", .bool(true)), member("paths", .number("5"))], content: nil).target == .all)
        #expect(try SaveMethod(params: [member("all", .bool(false))], content: nil).target == .all)
    }

    @Test func resultsKeepTheirWireTextAndReadBack() throws {
        let status = BufferStatus(path: "a", revision: 2, isDirty: true, isSaving: false, pendingSaveInMilliseconds: 40, bytes: nil)
        #expect(status.json.jsonText == #"{"path":"a","revision":2,"dirty":true,"saving":false,"bytes":null,"pendingSaveMs":40}"#)
        #expect(try BufferStatus(json: status.json) == status)

        let all = StatusMethod.Result(
            root: "/r", buffers: [status], conflicts: 1, watcher: WatcherStatus(files: 3, pendingChanges: 0, reportedChanges: 4, heldForWriters: 1))
        #expect(all.json.jsonText.hasPrefix(#"{"root":"/r","buffers":[{"path":"a""#))
        #expect(all.json.jsonText.hasSuffix(#""conflicts":1,"watcher":{"files":3,"pendingChanges":0,"reportedChanges":4,"heldForWriters":1}}"#))
        let back = try StatusMethod.Result(json: all.json)
        #expect(back.root == "/r" && back.buffers == [status] && back.conflicts == 1 && back.watcher == all.watcher)

        for content in [ReadMethod.Result.Content.missing, .text("x"), .bytes([0xFF]), .raw(count: 9)] {
            #expect(try ReadMethod.Result(json: ReadMethod.Result(path: "a", revision: 1, content: content).json).content == content)
        }
        #expect(ReadMethod.Result(path: "a", revision: 1, content: .missing).json.jsonText == #"{"path":"a","revision":1,"exists":false}"#)

        let patched = PatchMethod.Result(files: [EditedFile(path: "a", revision: 2)], isApplied: false)
        #expect(patched.json.jsonText == #"{"files":[{"path":"a","revision":2}],"applied":false}"#)
        #expect(try PatchMethod.Result(json: patched.json).files == patched.files)

        var outcome = FlushOutcome()
        outcome.saved = 2
        outcome.copied = [FlushOutcome.Copied(path: "a", copy: ".autosave/conflicts/a")]
        outcome.lost = ["b"]
        let stopped = ShutdownMethod.Result(outcome)
        #expect(stopped.json.jsonText == #"{"stopping":true,"saved":2,"copied":[{"path":"a","copy":".autosave/conflicts/a"}],"lost":["b"]}"#)
        #expect(try ShutdownMethod.Result(json: stopped.json).outcome == outcome)

        #expect(SaveMethod.Result().json.jsonText == #"{"saved":true}"#)
        #expect(CloseMethod.Result().json.jsonText == #"{"closed":true}"#)
        #expect(SyncMethod.Result().json.jsonText == #"{"synced":true}"#)
        #expect(SubscribeMethod.Result().json.jsonText == #"{"subscribed":true}"#)
        #expect(throws: RPCError.invalidParams("missing `revision` (a whole number)")) { try EditedFile(json: .object([member("path", .string("a"))])) }
        #expect(DroppedNotice(missed: 7).json.jsonText == #"{"reason":"behind","missed":7}"#)
        #expect(try DroppedNotice(json: DroppedNotice(missed: 7).json) == DroppedNotice(missed: 7))
    }

    @Test func aVersionByTimeTravelsAsAtBesideTheVersionOlderAgentsRead() throws {
        let byTime = ShowMethod(path: "a.txt", version: .time(1_795_773_600_000), isRaw: true)
        #expect(text(byTime.params) == #"{"path":"a.txt","at":1795773600000,"raw":true}"#)
        #expect(try roundTrip(byTime).version == .time(1_795_773_600_000))
        let byID = ShowMethod(path: "a.txt", version: .id(12))
        #expect(text(byID.params) == #"{"path":"a.txt","version":"12","raw":false}"#, "the wire text of ids is as before")
        #expect(try roundTrip(RestoreMethod(path: "a.txt", version: .time(5), to: "b.txt")).version == .time(5))
        #expect(try roundTrip(RestoreMethod(path: "a.txt", version: .back(1))).version == .back(1))
        #expect(throws: RPCError.invalidParams("give `version` or `at`, not both")) {
            try ShowMethod(params: [member("path", .string("a")), member("version", .string("1")), member("at", .number("5"))], content: nil)
        }
        let listed = Version(id: 3, path: "a.txt", time: 7, who: "cli", kind: .saved, size: 4, digest: nil, added: 2, removed: 1)
        #expect(try Version(json: listed.json) == listed, "added and removed read back")
        let unknown = Version(id: 1, path: "a.txt", time: 7, who: "external", kind: .baseline, size: 4, digest: nil)
        #expect(!unknown.json.jsonText.contains("added"), "unknown counts are absent: \(unknown.json.jsonText)")
    }
}
