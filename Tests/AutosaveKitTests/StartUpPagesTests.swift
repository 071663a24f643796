import Glibc
import Testing

@testable import AutosaveKit

/// Giving back start-up's pages: the executable's read-only pages leave the resident set.
@Suite(.serialized) struct StartUpPagesTests {
    @Test func theExecutablesReadOnlyPagesLeaveTheResidentSet() throws {
        let before = try #require(Self.residentFileKilobytes())
        let advised = StartUpPages.giveBack()
        let after = try #require(Self.residentFileKilobytes())
        #expect(advised > 0, "the executable's read-only mappings were found in /proc/self/maps")
        // The test binary is tens of megabytes of code, several of them resident by now.
        #expect(after < before - 1024, "resident file pages: \(before) kB before, \(after) kB after")
    }

    @Test func codePagedOutStillRuns() {
        StartUpPages.giveBack()
        // Faulted back in: a function this process had not run before runs, and right.
        #expect(PathText.normalized("/a/./b/../c") == "/a/c")
    }

    /// `RssFile` of /proc/self/status, in kB.
    static func residentFileKilobytes() -> Int? {
        guard let file = fopen("/proc/self/status", "r") else { return nil }
        defer { fclose(file) }
        var line = [CChar](repeating: 0, count: 256)
        while fgets(&line, Int32(line.count), file) != nil {
            let text = String(decoding: line.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            if text.hasPrefix("RssFile:") {
                return Int(text.dropFirst("RssFile:".count).filter { $0.isNumber })
            }
        }
        return nil
    }
}
