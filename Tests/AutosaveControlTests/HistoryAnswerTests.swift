@testable import AutosaveControl
import AutosaveHistory
import AutosaveKit
import NIOCore
import Testing

/// `history`'s answer, written by the agent straight from its versions and read by the client
/// straight from the text: the same text `json` makes, and the same versions back.
@Suite struct HistoryAnswerTests {
    static let versions = [
        Version(id: 10_001, path: "doc.txt", time: 1_795_854_477_940, who: "client", kind: .saved, size: 1_000_000, digest: 9, added: 1, removed: 1),
        Version(
            id: 12, path: "dir/a \"quoted\"\\name\n.txt", time: 5, who: "external", kind: .moved, size: nil, from: "old/é.txt",
            program: "mv", pid: 977, digest: nil),
        Version(id: 3, path: "c", time: -1, who: "restore", kind: .conflictCopy, size: 0, from: "c.conflict", digest: 0, added: 0, removed: 7),
    ]

    func written(_ result: HistoryMethod.Result) -> String {
        var writer = JSONWriter()
        result.write(to: &writer)
        return writer.text
    }

    func read(_ text: String) throws(JSONReader.SyntaxError) -> HistoryMethod.Result {
        try Array(text.utf8).withUnsafeBytes { bytes in
            Result { () throws(JSONReader.SyntaxError) in
                try JSONReader.read(bytes) { reader throws(JSONReader.SyntaxError) in try HistoryMethod.Result(reading: &reader) }
            }
        }.get()
    }

    /// `versions` as read back: the digest is not on the wire.
    static var sent: [Version] { versions.map { var version = $0; version.digest = nil; return version } }

    @Test func theWrittenTextIsTheValuesText() {
        let result = HistoryMethod.Result(versions: Self.versions)
        #expect(written(result) == result.json.jsonText)
        #expect(written(HistoryMethod.Result(versions: [])) == #"{"versions":[]}"#)
        #expect(
            written(HistoryMethod.Result(versions: [Self.versions[0]]))
                == #"{"versions":[{"version":10001,"path":"doc.txt","time":"2026-11-28T08:27:57.940Z","timeMs":1795854477940,"#
                + #""who":"client","kind":"saved","size":1000000,"added":1,"removed":1}]}"#)
        #expect(Self.versions[2].timestamp == "1969-12-31T23:59:59.999Z")
    }

    @Test func theTextReadsBackAsTheVersionsWithAndWithoutATree() throws {
        let result = HistoryMethod.Result(versions: Self.versions)
        #expect(try read(written(result)).versions == Self.sent)
        #expect(try HistoryMethod.Result(json: result.json).versions == Self.sent)
        for version in Self.versions {
            #expect(try Version(json: version.json) == Self.sent.first { $0.id == version.id })
        }
    }

    @Test func rowsAreTheMembersInOrderWithoutTimeOrTrailingNulls() throws {
        let result = HistoryMethod.Result(versions: Self.versions, form: .rows)
        #expect(written(result) == result.json.jsonText)
        #expect(
            written(result)
                == #"{"rows":[[10001,"doc.txt",1795854477940,"client","saved",1000000,1,1],"#
                + #"[12,"dir/a \"quoted\"\\name\n.txt",5,"external","moved",null,null,null,"old/é.txt","mv",977],"#
                + #"[3,"c",-1,"restore","conflict-copy",0,0,7,"c.conflict"]]}"#)
        #expect(try read(written(result)).versions == Self.sent)
        #expect(try read(written(result)).form == .rows)
        #expect(try HistoryMethod.Result(json: result.json).versions == Self.sent)
        // The columns are an object's members but `time`, in the same order.
        let everything = Version(
            id: 1, path: "a", time: 2, who: "external", kind: .modified, size: 3, from: "b", program: "sed", pid: 4, digest: 5, added: 6, removed: 7,
            parent: 8)
        guard case .object(let members) = everything.json else { throw RPCError.invalidParams("not an object") }
        #expect(Version.rowColumns == members.map(\.key).filter { $0 != "time" })
        #expect(Version.rowColumns.count == 12)
        // A conflict copy's parent, the last column, both ways.
        let copy = Version(id: 3, path: "c", time: 1, who: "cli", kind: .conflictCopy, size: 1, from: "x", digest: nil, parent: 2)
        for form in [HistoryMethod.Form.rows, .objects] {
            #expect(try read(written(HistoryMethod.Result(versions: [copy], form: form))).versions == [copy], "\(form)")
        }
    }

    @Test func aRowWithItemsPastTheKnownColumnsIsRead() throws {
        let text = #"{"rows":[[1,"a",2,"cli","saved",null,null,null,null,null,null,null,"a newer column",{"x":1}],[2,"b",3,"cli","removed"]]}"#
        #expect(
            try read(text).versions == [
                Version(id: 1, path: "a", time: 2, who: "cli", kind: .saved, size: nil, digest: nil),
                Version(id: 2, path: "b", time: 3, who: "cli", kind: .removed, size: nil, digest: nil),
            ])
        #expect(throws: JSONReader.SyntaxError.self) { try read(#"{"rows":[[1,"a",2,"cli"]]}"#) }
    }

    @Test func theFormIsAskedForAndObjectsUnlessAsked() throws {
        let rows = HistoryMethod(path: "a", form: .rows)
        #expect(JSONValue.object(rows.params).jsonText == #"{"path":"a","form":"rows"}"#)
        #expect(JSONValue.object(HistoryMethod(path: "a").params).jsonText == #"{"path":"a"}"#, "the wire text of the default is as before")
        #expect(try HistoryMethod(params: rows.params, content: nil).form == .rows)
        #expect(try HistoryMethod(params: [], content: nil).form == .objects)
        #expect(throws: RPCError.invalidParams(#"`form` must be "objects" or "rows", got "table""#)) {
            try HistoryMethod(params: [member("form", .string("table"))], content: nil)
        }
        // An agent from before `rows` answers with objects whatever was asked: they are read.
        let older = HistoryMethod.Result(versions: Self.versions)
        #expect(try read(written(older)).versions == Self.sent)
    }

    @Test func membersInAnyOrderNullsAndUnknownMembersAreRead() throws {
        let text = #"{"other":[1,{"a":null}],"versions":[{"kind":"modified","size":null,"who":"external","timeMs":7,"#
            + #""path":"x","version":2,"program":"sed","novel":{"x":[true]},"pid":12}]}"#
        #expect(try read(text).versions == [Version(id: 2, path: "x", time: 7, who: "external", kind: .modified, size: nil, program: "sed", pid: 12, digest: nil)])
    }

    @Test func whatIsWrongIsNamed() {
        func message(_ text: String) -> String? {
            do {
                _ = try read(text)
                return nil
            } catch {
                return error.message
            }
        }
        let whole = #""version":1,"path":"a","timeMs":2,"who":"cli""#
        #expect(message(#"{"versions":[{\#(whole),"kind":"saved"}]}"#) == nil)
        #expect(message(#"{"versions":[{\#(whole)}]}"#) == "missing `kind` (a string)")
        #expect(message(#"{"versions":[{\#(whole),"kind":"sung"}]}"#) == "`kind` is not a kind of version: sung")
        #expect(message(#"{"versions":[{\#(whole),"kind":"saved","size":"9"}]}"#) == "`size`: expected a whole number, found `\"`")
        #expect(message(#"{"versions":[{\#(whole),"kind":"saved","size":1.5}]}"#) == "`size`: expected a whole number, found a fraction or an exponent")
        #expect(message(#"{"versions":[{\#(whole),"kind":7}]}"#) == "`kind`: expected a string, found `7`")
        #expect(message(#"{"count":3}"#) == "missing `versions` (an array)")
        #expect(message(#"{"versions":{}}"#) == "expected an array, found `{`")
        #expect(throws: RPCError.invalidParams("missing `version` (a whole number)")) {
            try Version(json: .object([member("path", .string("a"))]))
        }
    }

    func message(_ line: String) throws -> IncomingMessage<HistoryMethod.Result> {
        try IncomingMessage(ControlFrame(line: ByteBuffer(string: line)), answering: .history)
    }

    @Test func theClientTellsAnswersRefusalsAndNotificationsApart() throws {
        let answer = #"{"jsonrpc":"2.0","id":1,"result":\#(written(HistoryMethod.Result(versions: Self.versions)))}"#
        guard case .answer(let result) = try message(answer) else { throw RPCError.invalidParams("not an answer: \(answer)") }
        #expect(result.versions == Self.sent)
        guard case .refusal(let refusal) = try message(#"{"jsonrpc":"2.0","id":1,"error":{"code":-32000,"message":"history is off"}}"#) else {
            throw RPCError.invalidParams("not a refusal")
        }
        #expect(refusal == .refused("history is off"))
        guard case .notification(let method, let params) = try message(#"{"jsonrpc":"2.0","method":"event","params":{"kind":"saved"}}"#)
        else { throw RPCError.invalidParams("not a notification") }
        #expect(method == "event" && params.jsonText == #"{"kind":"saved"}"#)
        guard case .other = try message("[1,2]"), case .other = try message(#"{"jsonrpc":"2.0"}"#) else {
            throw RPCError.invalidParams("not other")
        }
        #expect(throws: ControlClientError.unreadableAnswer(method: "history", reason: "missing `versions` (an array)")) {
            try message(#"{"jsonrpc":"2.0","id":1,"result":{}}"#)
        }
        // What is wrong inside the result makes the answer unreadable; outside it, not JSON.
        #expect(throws: ControlClientError.unreadableAnswer(method: "history", reason: "expected an array, found `}`")) {
            try message(#"{"jsonrpc":"2.0","id":1,"result":{"rows":[}}"#)
        }
        #expect(throws: JSONReader.SyntaxError.self) { try message(#"{"jsonrpc":"2.0" "id":1}"#) }
    }
}
