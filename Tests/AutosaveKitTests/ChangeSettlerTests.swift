@testable import AutosaveKit
import AutosaveTestKit
import Inotify
import Testing

@Suite struct ChangeSettlerTests {
    typealias Instant = ManualClock.Instant
    let start = Instant(offset: .zero)

    func at(_ milliseconds: Int) -> Instant { start.advanced(by: .milliseconds(milliseconds)) }

    @Test func aBurstSettlesOnceAfterItsLastEvent() {
        var settler = ChangeSettler<Instant>(settle: .milliseconds(50))
        settler.record(FileEvent(path: "a", kind: .modified), at: at(0))
        settler.record(FileEvent(path: "a", kind: .closedAfterWrite), at: at(30))
        #expect(settler.nextDeadline() == at(80))
        #expect(settler.takeDue(at: at(79)).isEmpty)
        #expect(settler.takeDue(at: at(80)) == [.init(path: "a", movedFrom: nil)])
        #expect(settler.nextDeadline() == nil)
    }

    @Test func namesSettleIndependently() {
        var settler = ChangeSettler<Instant>(settle: .milliseconds(50))
        settler.record(FileEvent(path: "a", kind: .modified), at: at(0))
        settler.record(FileEvent(path: "b", kind: .modified), at: at(40))
        #expect(settler.takeDue(at: at(60)).map(\.path) == ["a"])
        #expect(settler.takeDue(at: at(90)).map(\.path) == ["b"])
    }

    @Test func aRenameLeavesWithItsDestination() {
        var settler = ChangeSettler<Instant>(settle: .milliseconds(50))
        settler.record(FileEvent(path: "old", kind: .movedFrom, cookie: 7), at: at(0))
        settler.record(FileEvent(path: "new", kind: .movedTo, cookie: 7), at: at(0))
        settler.record(FileEvent(path: "new", kind: .modified), at: at(30))
        #expect(settler.takeDue(at: at(60)).isEmpty, "the source waits for its destination")
        #expect(settler.takeDue(at: at(80)) == [.init(path: "new", movedFrom: "old")])
        #expect(settler.nextDeadline() == nil)
    }

    @Test func aRenameFromAnUnpairedCookieIsPlain() {
        var settler = ChangeSettler<Instant>(settle: .milliseconds(50))
        settler.record(FileEvent(path: "f", kind: .movedTo, cookie: 9, renamedFromIgnored: "sedX1Y2Z3"), at: at(0))
        #expect(settler.takeDue(at: at(50)) == [.init(path: "f", movedFrom: nil)])
    }

    @Test func aListedFileDoesNotPostponeARealEvent() {
        var settler = ChangeSettler<Instant>(settle: .milliseconds(50))
        settler.record(FileEvent(path: "d/f", kind: .created), at: at(0))
        settler.touch("d/f", at: at(10))
        settler.touch("d/g", at: at(10))
        #expect(settler.takeDue(at: at(60)).map(\.path) == ["d/f", "d/g"])
    }

    @Test func pendingNamesFollowADirectoryRename() {
        var settler = ChangeSettler<Instant>(settle: .milliseconds(50))
        settler.record(FileEvent(path: "a/x/f", kind: .modified), at: at(0))
        settler.record(FileEvent(path: "ab/g", kind: .modified), at: at(0))
        settler.moveDirectory(from: "a", to: "b")
        #expect(settler.takeDue(at: at(50)).map(\.path) == ["ab/g", "b/x/f"])
    }

    @Test func knownFilesFollowDirectoryMovesAndRemovals() {
        var known = KnownFiles(["a/x/f", "a/g", "ab/h", "top"])
        known.moveDirectory(from: "a", to: "b")
        #expect(Set(known.all) == ["b/x/f", "b/g", "ab/h", "top"])
        #expect(known.removeDirectory("b") == 2)
        #expect(Set(known.all) == ["ab/h", "top"])
        #expect(known.count == 2)
        #expect(known.files(in: "") == ["top"])
    }
}
