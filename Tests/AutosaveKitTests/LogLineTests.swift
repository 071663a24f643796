@testable import AutosaveKit
import Foundation
import Logging
import Testing

@Suite struct LogLineTests {
    let instant = Date(timeIntervalSince1970: 1_795_298_400.123)

    @Test func textLinesAreLogfmtAfterTheEventName() {
        let line = LogLine.render(
            format: .text, timestamp: instant, level: .info, event: "saved",
            fields: ["ms": "9.1", "bytes": "120", "path": "src/a.txt", "revision": "3"])
        #expect(line == "2026-11-21T22:00:00.123Z info saved path=src/a.txt revision=3 bytes=120 ms=9.1")
    }

    @Test func valuesThatNeedItAreQuoted() {
        let line = LogLine.render(
            format: .text, timestamp: instant, level: .warning, event: "save-failed",
            fields: ["path": "my file.txt", "error": "Permission denied", "next": "retry in 0.1 s", "quote": "a\"b"])
        #expect(
            line == "2026-11-21T22:00:00.123Z warning save-failed path=\"my file.txt\" quote=\"a\\\"b\" "
                + "error=\"Permission denied\" next=\"retry in 0.1 s\"")
    }

    @Test func jsonLinesCarryTimestampLevelEventAndTypedFields() throws {
        let line = LogLine.render(
            format: .json, timestamp: instant, level: .info, event: "ready",
            fields: ["root": "/srv/p", "dirs": "12", "ms": "3.5", "directory": "true"])
        #expect(
            line == "{\"ts\":\"2026-11-21T22:00:00.123Z\",\"level\":\"info\",\"event\":\"ready\",\"root\":\"/srv/p\","
                + "\"directory\":true,\"dirs\":12,\"ms\":3.5}")
        let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
        #expect(object?["dirs"] as? Int == 12)
    }

    @Test func onlyWholeJSONNumbersArePrintedBare() {
        for number in ["0", "12", "-3", "3.5", "0.25", "1e9", "-2.5E-3"] { #expect(LogLine.isJSONNumber(number), "\(number)") }
        for text in ["", "-", "01", "1.", ".5", "1e", "1e+", "12a", " 12", "0x1F", "NaN", "1.2.3", String(repeating: "9", count: 40)] {
            #expect(!LogLine.isJSONNumber(text), "\(text)")
        }
        let line = LogLine.render(
            format: .json, timestamp: instant, level: .info, event: "saved", fields: ["path": "01", "revision": "-7", "ms": "1."])
        #expect(line.hasSuffix(",\"path\":\"01\",\"revision\":-7,\"ms\":\"1.\"}"))
    }

    @Test func nestedFieldsAreJSONWithTypedScalars() {
        let line = LogLine.render(
            format: .json, timestamp: instant, level: .info, event: "rescan",
            fields: ["scope": ["a", "3"], "counts": ["created": "2", "ok": .stringConvertible(true), "name": "x y"]])
        #expect(line.hasSuffix(",\"counts\":{\"created\":2,\"name\":\"x y\",\"ok\":true},\"scope\":[\"a\",3]}"))
    }

    @Test func timestampsArePaddedToFixedWidth() {
        let early = Date(timeIntervalSince1970: 1_767_236_406.0075)  // 2026-01-01T03:00:06.007Z (half a ms in, clear of rounding)
        let line = LogLine.render(format: .text, timestamp: early, level: .info, event: "ready", fields: [:])
        #expect(line == "2026-01-01T03:00:06.007Z info ready")
    }

    @Test func theHandlerFiltersByLevel() {
        let lines = LinesBox()
        var logger = Logger(label: "t") { _ in AgentLogHandler(level: .warning, format: .text, sink: lines.append) }
        logger.info("ignored")
        logger.warning("kept", metadata: ["path": "a"])
        logger.logLevel = .warning
        #expect(lines.all.count == 1)
        #expect(lines.all.first?.hasSuffix(" warning kept path=a") == true)
    }
}

import Synchronization

final class LinesBox: Sendable {
    private let lines = Mutex<[String]>([])
    var all: [String] { lines.withLock { $0 } }
    var append: @Sendable (String) -> Void { { line in self.lines.withLock { $0.append(line) } } }
}
