@testable import AutosaveControl
import AutosaveKit
import FoundationEssentials
import Testing

/// `forget` on the wire: its params and result read back as written, and a request that would
/// forget the whole tree is refused before anything is done.
@Suite struct ForgetMethodTests {
    @Test func paramsAndResultReadBackAsWritten() throws {
        let request = ForgetMethod(path: "/root/secret.env")
        #expect(JSONValue.object(request.params).jsonText == #"{"path":"/root/secret.env"}"#)
        #expect(try ForgetMethod(params: request.params, content: nil).path == "/root/secret.env")
        let result = ForgetMethod.Result(path: "secret.env", versions: 3, contents: 2, sharedContents: 1, bytes: 4096)
        #expect(result.json.jsonText == #"{"path":"secret.env","versions":3,"contents":2,"sharedContents":1,"bytes":4096}"#)
        let read = try ForgetMethod.Result(json: result.json)
        #expect(read.path == "secret.env" && read.versions == 3 && read.contents == 2 && read.sharedContents == 1 && read.bytes == 4096)
    }

    @Test func anEmptyPathIsRefusedNotTakenAsTheWholeTree() {
        #expect(throws: RPCError.self) { try ForgetMethod(params: [member("path", .string(""))], content: nil) }
        #expect(throws: RPCError.invalidParams("missing `path` (a string)")) { try ForgetMethod(params: [], content: nil) }
    }
}
