import AutosaveTestKit
import Glibc
@testable import Inotify
import PropertyBased
import Testing

/// A scan's listing with a `FileNameScreen` keeps most files straight from the bytes the kernel
/// wrote, without asking the ignore rule or making a `String`. The class of bug is "the fast path
/// keeps what the slow one would not, or spells it differently": an ignored file known, the
/// private marker missed, a non-UTF-8 name known by other bytes than its events carry.
@Suite struct DirectoryListingTests {
    /// A rule that ignores names by their first and/or last byte, and the screen that admits it.
    struct Rule: Sendable {
        var first: UInt8?
        var last: UInt8?
        func ignores(_ name: String) -> Bool {
            let bytes = Array(name.utf8)
            return (first.map { bytes.first == $0 } ?? true) && (last.map { bytes.last == $0 } ?? true)
        }
    }

    static func contents(of directory: String, rules: [Rule], screened: Bool) throws -> DirectoryContents {
        var screen: FileNameScreen?
        if screened {
            screen = FileNameScreen()
            for rule in rules { screen!.admit(first: rule.first, last: rule.last) }
        }
        let mailbox = Mailbox(
            root: directory, cookieDirectory: "/nonexistent/cookies", ownDirectory: nil,
            isIgnored: { _, name, _ in rules.contains { $0.ignores(name) } }, ignoreScreen: screen,
            isLeftover: { $0.hasSuffix("p") }, privateMarker: "agent.lock", sink: WatchEventSink(deliver: { _ in }, end: {}))
        let filter = EntryFilter(mailbox: mailbox, directory: "", collectsLeftovers: true)
        return try DirectoryListing.contents(of: directory, statFiles: false, filter: filter)
    }

    static func expectSame(_ screened: DirectoryContents, _ asked: DirectoryContents, _ context: String) {
        #expect(Array(screened.files) == Array(asked.files), "\(context)")
        // Known by the same bytes, not only read back alike: a lookup by an event's name finds it.
        for name in asked.files { #expect(screened.files.contains(name), "\(name), \(context)") }
        #expect(screened.directories.sorted() == asked.directories.sorted(), "\(context)")
        #expect(screened.leftovers.sorted() == asked.leftovers.sorted(), "\(context)")
        #expect(screened.hasPrivateMarker == asked.hasPrivateMarker, "\(context)")
    }

    @Test func aScreenedListingKeepsExactlyWhatAskingEveryNameKeeps() throws {
        let directory = try TemporaryDirectory()
        // Plain names, ignored ones (`.swp`), a name the screen sends to the rule that keeps it
        // (`ship`), non-ASCII, a name that is not UTF-8, the private marker, a subdirectory.
        for name in ["main.swift", "a.swp", ".b.swp", "ship", "été.txt", "agent.lock", "x"] {
            _ = try directory.write(name, "1")
        }
        // Names that are not UTF-8 (`g`, 0xFF, `p` and `h`, 0xFF, `x`) are not tracked: neither
        // listing holds them, under any spelling, ignored or kept.
        for (first, last) in [("g", "p"), ("h", "x")] {
            let raw: [UInt8] = Array((directory.path + "/" + first).utf8) + [0xFF] + Array(last.utf8) + [0]
            let fd = raw.withUnsafeBytes { open($0.baseAddress!.assumingMemoryBound(to: CChar.self), O_CREAT | O_WRONLY, 0o644) }
            try #require(fd >= 0)
            close(fd)
        }
        try directory.makeDirectory("src")
        let rules = [Rule(first: nil, last: UInt8(ascii: "p"))]
        let screened = try Self.contents(of: directory.path, rules: rules, screened: true)
        let asked = try Self.contents(of: directory.path, rules: rules, screened: false)
        Self.expectSame(screened, asked, "one directory")
        #expect(Set(screened.files) == ["main.swift", "été.txt", "agent.lock", "x"])
        #expect(Set(screened.leftovers) == ["a.swp", ".b.swp", "ship"], "ignored, ending in p")
        #expect(screened.hasPrivateMarker, "the marker is seen though no rule ignores it")
        #expect(screened.directories == ["src"])
    }

    @Test func randomNamesAndRulesListTheSameScreenedOrNot() throws {
        var random = Xoshiro(seed: (0x6C69_7374, 0x696E_6721, 0x7363_7265, 0x656E_6564))
        func below(_ bound: Int) -> Int { Int(random.next() % UInt64(bound)) }
        let letters: [String] = ["a", "b", "p", ".", "é", "~", "#", "1"]
        let bytes: [UInt8] = [UInt8(ascii: "a"), UInt8(ascii: "p"), UInt8(ascii: "."), UInt8(ascii: "~"), UInt8(ascii: "#"), 0xC3]
        for round in 0..<20 {
            let directory = try TemporaryDirectory()
            var names: Set<String> = []
            for _ in 0..<(5 + below(40)) {
                names.insert((0...below(5)).map { _ in letters[below(letters.count)] }.joined())
            }
            names.subtract([".", ".."])
            if below(3) == 0 { names.insert("agent.lock") }
            for name in names { _ = try directory.write(name, "") }
            let rules = (0..<below(4)).map { _ in
                Rule(first: below(3) == 0 ? nil : bytes[below(bytes.count)], last: below(3) == 0 ? nil : bytes[below(bytes.count)])
            }
            let screened = try Self.contents(of: directory.path, rules: rules, screened: true)
            let asked = try Self.contents(of: directory.path, rules: rules, screened: false)
            Self.expectSame(screened, asked, "round \(round), rules \(rules), names \(names.sorted())")
            let kept = names.filter { name in !rules.contains { $0.ignores(name) } }
            #expect(Set(screened.files) == kept, "round \(round)")
        }
    }
}
