@testable import AutosaveKit
import Testing

@Suite struct FlushOrderTests {
    @Test func savesInFlightTakeTheDirectoriesInTurn() {
        let paths = ["b/2", "a/1", "a/2", "a/3", "b/1", "top", "c/d/1"]
        #expect(FlushOrder.interleavingDirectories(paths) == ["top", "a/1", "b/1", "c/d/1", "a/2", "b/2", "a/3"])
    }

    @Test func everyPathIsSavedExactlyOnce() {
        let paths = (0..<1000).map { "d\($0 % 7)/sub\($0 % 3)/f\($0)" }
        let order = FlushOrder.interleavingDirectories(paths.shuffled())
        #expect(order.count == paths.count)
        #expect(Set(order) == Set(paths))
    }
}
