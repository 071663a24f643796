@testable import AutosaveControl
import Testing

/// `FrameReader.contains`, which looks for `contentBytes` in every line before it is parsed:
/// the same answer as a byte-by-byte search, wherever the needle is, or its first byte is.
@Suite struct FrameSearchTests {
    func contains(_ needle: [UInt8], _ haystack: [UInt8]) -> Bool {
        haystack.withUnsafeBytes { FrameReader.contains(needle, in: $0) }
    }

    func naive(_ needle: [UInt8], _ haystack: [UInt8]) -> Bool {
        guard !needle.isEmpty, needle.count <= haystack.count else { return false }
        return (0...(haystack.count - needle.count)).contains { Array(haystack[$0..<($0 + needle.count)]) == needle }
    }

    @Test func atTheEndsAndAcrossFalseStarts() {
        let key = Array(#""contentBytes""#.utf8)
        #expect(contains(key, key))
        #expect(contains(key, Array(#"{"contentBytes":3}"#.utf8)))
        #expect(contains(key, Array(#"{"a":"x","contentBytes""#.utf8)))
        #expect(!contains(key, Array(#"{"contentByte":3}"#.utf8)))
        #expect(!contains(key, Array(#"""""""""""""""contentByte"#.utf8)))
        #expect(!contains(key, []))
        #expect(!contains([], Array("abc".utf8)))
        #expect(contains(Array(#"\u"#.utf8), Array(#""a\\u\u0041""#.utf8)))
    }

    @Test func theSameAsAByteByByteSearch() {
        var random = SystemRandomNumberGenerator()
        for _ in 0..<3000 {
            // Two letters only, so partial matches are everywhere.
            let haystack = (0..<Int.random(in: 0..<40, using: &random)).map { _ in UInt8.random(in: 97...98, using: &random) }
            let needle = (0..<Int.random(in: 1..<5, using: &random)).map { _ in UInt8.random(in: 97...98, using: &random) }
            #expect(contains(needle, haystack) == naive(needle, haystack), "\(needle) in \(haystack)")
        }
    }
}
