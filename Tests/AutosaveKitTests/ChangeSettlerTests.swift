@testable import AutosaveKit
import AutosaveTestKit
import ByteNames
import Inotify
import Testing

@Suite struct ChangeSettlerTests {
    typealias Instant = ManualClock.Instant
    let start = Instant(offset: .zero)

    func at(_ milliseconds: Int) -> Instant { start.advanced(by: .milliseconds(milliseconds)) }

    typealias Burst = ChangeSettler<Instant>.Burst

    func moved(_ settler: inout ChangeSettler<Instant>, _ from: String, _ to: String, cookie: UInt32, at time: Int) {
        settler.record(FileEvent(path: from, kind: .movedFrom, cookie: cookie), at: at(time))
        settler.record(FileEvent(path: to, kind: .movedTo, cookie: cookie), at: at(time))
    }

    /// A write finished: the writer's modification, then its close.
    func wrote(_ settler: inout ChangeSettler<Instant>, _ path: String, at time: Int) {
        settler.record(FileEvent(path: path, kind: .modified), at: at(time))
        settler.record(FileEvent(path: path, kind: .closedAfterWrite), at: at(time))
    }

    @Test func aBurstSettlesOnceAfterItsLastEvent() {
        var settler = ChangeSettler<Instant>(settle: .milliseconds(50))
        settler.record(FileEvent(path: "a", kind: .modified), at: at(0))
        settler.record(FileEvent(path: "a", kind: .closedAfterWrite), at: at(30))
        #expect(settler.nextDeadline() == at(80))
        #expect(settler.takeDue(at: at(79)).isEmpty)
        #expect(settler.takeDue(at: at(80)) == [Burst(names: ["a"])])
        #expect(settler.nextDeadline() == nil)
    }

    @Test func namesSettleIndependently() {
        var settler = ChangeSettler<Instant>(settle: .milliseconds(50))
        wrote(&settler, "a", at: 0)
        wrote(&settler, "b", at: 40)
        #expect(settler.takeDue(at: at(60)).map(\.names) == [["a"]])
        #expect(settler.takeDue(at: at(90)).map(\.names) == [["b"]])
    }

    @Test func aRenameLeavesWithItsDestination() {
        var settler = ChangeSettler<Instant>(settle: .milliseconds(50))
        moved(&settler, "old", "new", cookie: 7, at: 0)
        wrote(&settler, "new", at: 30)
        #expect(settler.takeDue(at: at(60)).isEmpty, "the source waits for its destination")
        #expect(settler.takeDue(at: at(80)) == [Burst(names: ["new", "old"], origins: ["new": .name("old"), "old": .vacated], hops: ["new": ["old"]])])
        #expect(settler.nextDeadline() == nil)
    }

    /// A file created, renamed over a known name, then on: its content is new to the burst, and it
    /// came through both names (a buffer on either that read it follows it).
    @Test func aFileRenamedOverANameAndOnCameThroughItsNames() {
        var settler = ChangeSettler<Instant>(settle: .milliseconds(50))
        settler.record(FileEvent(path: "d/y", kind: .created), at: at(0))
        moved(&settler, "d/y", "a", cookie: 1, at: 1)
        wrote(&settler, "a", at: 2)
        moved(&settler, "a", "c", cookie: 2, at: 3)
        #expect(
            settler.takeDue(at: at(60)) == [
                Burst(names: ["a", "c", "d/y"], origins: ["a": .vacated, "c": .new, "d/y": .vacated], hops: ["c": ["d/y", "a"]])
            ])
    }

    /// A rename storm through one chain keeps the latest names only, so each step costs the same.
    @Test func aLongChainKeepsItsLatestHops() {
        var settler = ChangeSettler<Instant>(settle: .milliseconds(50))
        for step in 0..<100 { moved(&settler, "f\(step)", "f\(step + 1)", cookie: UInt32(step + 1), at: 0) }
        let burst = settler.takeDue(at: at(50)).first
        #expect(burst?.hops["f100"] == (84..<100).map { "f\($0)" })
        #expect(burst?.origins["f100"] == .name("f0"), "the origin is kept whole")
    }

    @Test func aRenameFromAnUnpairedCookieIsNewContent() {
        var settler = ChangeSettler<Instant>(settle: .milliseconds(50))
        settler.record(FileEvent(path: "f", kind: .movedTo, cookie: 9, renamedFromIgnored: "sedX1Y2Z3"), at: at(0))
        #expect(settler.takeDue(at: at(50)) == [Burst(names: ["f"], origins: ["f": .new])])
    }

    /// `mv a t; mv t a`: the pair used to wait for each other for ever, and the name went deaf.
    @Test func aNameRenamedAwayAndBackSettlesAsItselfAndStaysHeard() {
        var settler = ChangeSettler<Instant>(settle: .milliseconds(50))
        moved(&settler, "a", "t", cookie: 1, at: 0)
        moved(&settler, "t", "a", cookie: 2, at: 10)
        #expect(settler.takeDue(at: at(60)) == [Burst(names: ["a", "t"], origins: ["t": .vacated], hops: ["a": ["a", "t"]])])
        #expect(settler.pending.isEmpty)
        wrote(&settler, "a", at: 1000)
        #expect(settler.takeDue(at: at(1050)) == [Burst(names: ["a"])])
    }

    @Test func aChainOfRenamesSettlesAsOneMoveFromItsStart() {
        var settler = ChangeSettler<Instant>(settle: .milliseconds(50))
        moved(&settler, "a", "c", cookie: 1, at: 0)
        moved(&settler, "c", "d", cookie: 2, at: 5)
        #expect(
            settler.takeDue(at: at(55))
                == [
                    Burst(names: ["a", "c", "d"], origins: ["a": .vacated, "c": .vacated, "d": .name("a")], hops: ["d": ["a", "c"]])
                ])
    }

    @Test func aSwapThroughAThirdNameGivesEachNameTheOthersContent() {
        var settler = ChangeSettler<Instant>(settle: .milliseconds(50))
        moved(&settler, "a", "t", cookie: 1, at: 0)
        moved(&settler, "b", "a", cookie: 2, at: 1)
        moved(&settler, "t", "b", cookie: 3, at: 2)
        wrote(&settler, "b", at: 20)
        #expect(settler.takeDue(at: at(52)).isEmpty, "b is still busy, and the burst waits for it")
        #expect(
            settler.takeDue(at: at(70))
                == [
                    Burst(
                        names: ["a", "b", "t"], origins: ["a": .name("b"), "b": .name("a"), "t": .vacated],
                        hops: ["a": ["b"], "b": ["a", "t"]])
                ])
    }

    @Test func aNameThatNeverGoesQuietSettlesAtMaxSettle() {
        var settler = ChangeSettler<Instant>(settle: .milliseconds(50), maxSettle: .milliseconds(1000))
        var reported: [Int] = []
        for time in stride(from: 0, through: 3000, by: 20) {
            settler.record(FileEvent(path: "log", kind: .modified), at: at(time))
            if !settler.takeDue(at: at(time)).isEmpty { reported.append(time) }
        }
        #expect(reported == [1000, 2020], "at most maxSettle after the first event of each window")
    }

    /// A program truncated a file, wrote half, paused, wrote the rest: its half was reported (and
    /// merged, and saved) as if it were the file. A write with no close after it holds the window.
    @Test func aWriteNotClosedYetIsHeldUntilTheWriterClosesTheFile() {
        var settler = ChangeSettler<Instant>(settle: .milliseconds(50), maxSettle: .milliseconds(1000))
        settler.record(FileEvent(path: "data", kind: .modified), at: at(0))
        #expect(settler.takeDue(at: at(500)).isEmpty, "held for the writer")
        #expect(settler.pending["data"]?.isHeld == true)
        #expect(settler.nextDeadline() == at(1000), "no look before the cap: the close says when")
        settler.record(FileEvent(path: "data", kind: .modified), at: at(600))
        settler.record(FileEvent(path: "data", kind: .closedAfterWrite), at: at(600))
        #expect(settler.nextDeadline() == at(600), "the close ends the write")
        #expect(settler.takeDue(at: at(600)) == [Burst(names: ["data"])])
    }

    /// A logger that never closes its file is reported at the cap, as any busy file is.
    @Test func aWriterThatNeverClosesIsReportedAtTheCap() {
        var settler = ChangeSettler<Instant>(settle: .milliseconds(50), maxSettle: .milliseconds(1000))
        settler.record(FileEvent(path: "app.log", kind: .modified), at: at(0))
        #expect(settler.takeDue(at: at(999)).isEmpty)
        #expect(settler.takeDue(at: at(1000)) == [Burst(names: ["app.log"])])
    }

    /// `truncate(2)` modifies a file nobody has open: nothing to wait for.
    @Test func aWriteByNoOneStillHoldingTheFileIsNotHeld() {
        var settler = ChangeSettler<Instant>(settle: .milliseconds(50), maxSettle: .milliseconds(1000))
        settler.record(FileEvent(path: "f", kind: .modified), at: at(0))
        #expect(settler.takeDue(at: at(50), isHeld: { _ in false }) == [Burst(names: ["f"])])
    }

    /// A writer's file renamed away or replaced by a rename: the name holds another file now.
    @Test func aNameReplacedAfterAWriteIsNotHeld() {
        var settler = ChangeSettler<Instant>(settle: .milliseconds(50), maxSettle: .milliseconds(1000))
        settler.record(FileEvent(path: "f", kind: .modified), at: at(0))
        moved(&settler, "f.tmp", "f", cookie: 3, at: 10)
        #expect(settler.takeDue(at: at(60)).map(\.names) == [["f", "f.tmp"]])
    }

    @Test func maxSettleIsNeverShorterThanSettle() {
        let settler = ChangeSettler<Instant>(settle: .milliseconds(500), maxSettle: .milliseconds(100))
        #expect(settler.maxSettle == .milliseconds(500))
    }

    @Test func aListedFileDoesNotPostponeARealEvent() {
        var settler = ChangeSettler<Instant>(settle: .milliseconds(50))
        settler.record(FileEvent(path: "d/f", kind: .created), at: at(0))
        settler.touch("d/f", at: at(10))
        settler.touch("d/g", at: at(10))
        #expect(settler.takeDue(at: at(60)).map(\.names) == [["d/f"], ["d/g"]])
    }

    @Test func pendingNamesAndOriginsFollowADirectoryRename() {
        var settler = ChangeSettler<Instant>(settle: .milliseconds(50))
        wrote(&settler, "a/x/f", at: 0)
        wrote(&settler, "ab/g", at: 0)
        moved(&settler, "a/h", "top", cookie: 4, at: 0)
        settler.moveDirectory(from: "a", to: "b")
        #expect(
            settler.takeDue(at: at(50)) == [
                Burst(names: ["ab/g"]), Burst(names: ["b/h", "top"], origins: ["b/h": .vacated, "top": .name("b/h")], hops: ["top": ["b/h"]]),
                Burst(names: ["b/x/f"]),
            ])
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
