// JSONReader on large hostile documents: the control socket hands it lines of up to
// limits.maxRequestBytes (64 MiB by default), so its cost must stay linear in the input.
// Run with `swift test --filter JSONReaderCostTests`.
import AutosaveKit
import Testing

@Suite struct JSONReaderCostTests {
    /// Found while fuzzing: the duplicate-key check scanned every earlier key, so an object of n
    /// keys cost n² comparisons (20,000 keys, a 200 KB request, took 33 s; 100,000 would take
    /// about 14 minutes). With a set of the keys seen, 100,000 keys take well under a second.
    @Test func anObjectWithManyKeysParsesInLinearTime() throws {
        let count = 100_000
        let text = "{" + (0..<count).map { "\"key\($0)\":\($0)" }.joined(separator: ",") + "}"
        let clock = ContinuousClock()
        let start = clock.now
        let value = try JSONReader.parse(Array(text.utf8))
        let elapsed = clock.now - start
        guard case .object(let members) = value else {
            Issue.record("expected an object, got \(value.kindDescription)")
            return
        }
        #expect(members.count == count)
        #expect(members.last?.key == "key\(count - 1)")
        #expect(elapsed < .seconds(10), "parsing \(count) keys took \(elapsed)")
    }

    @Test func aDuplicateKeyAfterManyKeysIsStillFound() {
        let text = "{" + (0..<10_000).map { "\"key\($0)\":0" }.joined(separator: ",") + ",\"key5000\":1}"
        #expect(throws: JSONReader.SyntaxError.self) { try JSONReader.parse(Array(text.utf8)) }
        do {
            _ = try JSONReader.parse(Array(text.utf8))
        } catch {
            #expect(error.message == "duplicate key `key5000`")
        }
    }
}
