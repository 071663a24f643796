// libFuzzer target: the control socket's request decoder. The input is a byte stream as a
// connection delivers it: `FrameReader` cuts it into frames (lines, and the raw bytes a line
// announces with `contentBytes`) as the server's pipeline does, and each frame's line goes
// through `RPCLine`, the code the server runs.
// Build and run with `Fuzz/run [SECONDS]`; seeds are in Fuzz/Seeds/FuzzRequestDecoder/.
//
// Beyond "no crash, no hang": the stream read whole and read in small pieces gives the same
// frames and the same framing error (how the kernel splits a stream changes nothing); an error
// response is itself a valid JSON-RPC 2.0 error object that echoes the request's id, and a
// request's id and params survive being written back as JSON (the server echoes the id in every
// response).
import AutosaveControl
import AutosaveKit
import NIOCore

/// One fuzz input: bytes received on a control-socket connection.
func fuzzRequestDecoder(_ input: UnsafeBufferPointer<UInt8>) -> CInt {
    let whole = frames(of: Array(input), piece: Int.max)
    // The piece size comes from the input itself, so the fuzzer explores the cuts too.
    let piece = 1 + Int(input.first ?? 0) % 17
    let cut = frames(of: Array(input), piece: piece)
    guard whole.lines == cut.lines, whole.contents == cut.contents, whole.error == cut.error else {
        fatalError("FuzzRequestDecoder: read in pieces of \(piece) the stream frames differently: \(whole) against \(cut)")
    }
    for line in whole.lines { check(line) }
    return 0
}

/// What a reader (limit 4096, as a small `limits.maxRequestBytes`) makes of `stream` fed in
/// pieces of `piece` bytes.
private func frames(of stream: [UInt8], piece: Int) -> (lines: [[UInt8]], contents: [[UInt8]?], error: FramingError?) {
    var reader = FrameReader(limit: 4096, announcer: .params)
    var buffer = ByteBuffer()
    var lines: [[UInt8]] = []
    var contents: [[UInt8]?] = []
    do {
        var offset = 0
        while offset < stream.count {
            buffer.writeBytes(stream[offset..<min(stream.count, offset + piece)])
            offset = min(stream.count, offset + piece)
            while let frame = try reader.next(from: &buffer) {
                lines.append(Array(frame.line.readableBytesView))
                contents.append(frame.content)
            }
        }
        while let frame = try reader.last(from: &buffer) {
            lines.append(Array(frame.line.readableBytesView))
            contents.append(frame.content)
        }
        return (lines, contents, nil)
    } catch {
        return (lines, contents, error)
    }
}

private func check(_ line: [UInt8]) {
    switch RPCLine(line) {
    case .request(let request):
        if let id = request.id { expectRoundTrip(id, what: "the id") }
        expectRoundTrip(.object(request.params), what: "the params")
    case .rejected(let response):
        let value: JSONValue
        do { value = try JSONReader.parse(Array(response.utf8)) } catch {
            fatalError("FuzzRequestDecoder: the error response is not JSON (\(error.message)): \(response)")
        }
        guard case .object(let members) = value,
            members.first(where: { $0.key == "jsonrpc" })?.value == .string("2.0"),
            case .object(let error)? = members.first(where: { $0.key == "error" })?.value,
            case .number? = error.first(where: { $0.key == "code" })?.value,
            case .string? = error.first(where: { $0.key == "message" })?.value,
            let id = members.first(where: { $0.key == "id" })?.value
        else { fatalError("FuzzRequestDecoder: the error response is not a JSON-RPC 2.0 error: \(response)") }
        // When the line was an object with an id, the response must carry that id.
        if case .object(let sent)? = try? JSONReader.parse(line), let sentID = sent.first(where: { $0.key == "id" })?.value,
            !sameJSON(sentID, id)
        {
            fatalError("FuzzRequestDecoder: the error response lost the request id \(sentID.jsonText): \(response)")
        }
    }
}

/// Fails unless `value` written as JSON text reads back as the same value.
private func expectRoundTrip(_ value: JSONValue, what: String) {
    let text = value.jsonText
    do {
        let reread = try JSONReader.parse(Array(text.utf8))
        guard sameJSON(value, reread) else { fatalError("FuzzRequestDecoder: \(what) reads back differently: \(text)") }
    } catch {
        fatalError("FuzzRequestDecoder: \(what) written as JSON is rejected (\(error.message)): \(text)")
    }
}

/// Structural equality, ignoring where each key was in the source.
private func sameJSON(_ a: JSONValue, _ b: JSONValue) -> Bool {
    switch (a, b) {
    case (.array(let x), .array(let y)): return x.count == y.count && zip(x, y).allSatisfy { sameJSON($0, $1) }
    case (.object(let x), .object(let y)):
        return x.count == y.count && zip(x, y).allSatisfy { $0.key == $1.key && sameJSON($0.value, $1.value) }
    default: return a == b
    }
}
