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
