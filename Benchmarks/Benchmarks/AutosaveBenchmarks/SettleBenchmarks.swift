// Kernel events per second through the settle window: the step that turns each burst of inotify
// events on a name into one change, pairing renames by cookie (ChangeSettler).
import AutosaveKit
import Benchmark
import Inotify

/// One batch of 1,000 kernel events, as the watcher hands them to the settler: the event
/// sequences real writers produce (as inotifywait shows them), each on its own file name,
/// with the names the watcher ignores (sed's temp files, vim's backup) already filtered out.
final class SettleFixture {
    static let settle: Duration = .milliseconds(50)
    var settler: ChangeSettler<ContinuousClock.Instant>?
    var events: [FileEvent] = []
    /// How many changes one batch settles into (one per writer sequence).
    var expectedChanges = 0
    /// The settler's clock: only moves forward, one microsecond per event.
    var now = ContinuousClock.now

    /// The event sequence of one save of `name` by a kind of writer; `cookie` pairs renames.
    static func save(_ name: String, writer: Int, cookie: UInt32) -> [FileEvent] {
        switch writer {
        case 0:  // echo > f over an existing file: in place
            return [FileEvent(path: name, kind: .modified), FileEvent(path: name, kind: .closedAfterWrite)]
        case 1:  // sed -i: its temp name is ignored, only the rename onto the file reaches the settler
            return [FileEvent(path: name, kind: .movedTo, cookie: cookie, renamedFromIgnored: "sedAb12Cd")]
        case 2:  // Python os.replace from a visible temp name: two names, one change
            let temp = name + ".tmp"
            return [
                FileEvent(path: temp, kind: .created), FileEvent(path: temp, kind: .modified),
                FileEvent(path: temp, kind: .closedAfterWrite), FileEvent(path: temp, kind: .movedFrom, cookie: cookie),
                FileEvent(path: name, kind: .movedTo, cookie: cookie),
            ]
        case 3:  // vim: the file is renamed to an ignored backup name, then written anew
            return [
                FileEvent(path: name, kind: .movedFrom, cookie: cookie), FileEvent(path: name, kind: .created),
                FileEvent(path: name, kind: .modified), FileEvent(path: name, kind: .attributesChanged),
                FileEvent(path: name, kind: .closedAfterWrite),
            ]
        default:  // git checkout of a new file
            return [
                FileEvent(path: name, kind: .created), FileEvent(path: name, kind: .modified),
                FileEvent(path: name, kind: .closedAfterWrite),
            ]
        }
    }

    /// Builds exactly `count` events from whole writer sequences, and checks once that the batch
    /// settles into one change per sequence.
    func setUp(count: Int) throws {
        events = []
        expectedChanges = 0
        var writer = 0
        while events.count < count {
            var sequence = Self.save("src/module\(expectedChanges % 50)/file\(expectedChanges).swift", writer: writer, cookie: UInt32(expectedChanges + 1))
            writer = (writer + 1) % 5
            // The last slot takes the one-event sequence, so the batch ends on a whole save.
            if events.count + sequence.count > count { sequence = Self.save("src/last\(expectedChanges).swift", writer: 1, cookie: UInt32(expectedChanges + 1)) }
            events += sequence
            expectedChanges += 1
        }
        var check = ChangeSettler<ContinuousClock.Instant>(settle: Self.settle)
        let due = runBatch(&check)
        guard due == expectedChanges else {
            throw BenchmarkSetupError("the settler turned \(events.count) events into \(due) changes, expected \(expectedChanges)")
        }
        settler = ChangeSettler(settle: Self.settle)
    }

    /// Records the batch, one microsecond apart, then takes every change once the windows close.
    ///
    /// - Returns: how many changes settled.
    func runBatch(_ settler: inout ChangeSettler<ContinuousClock.Instant>) -> Int {
        var clock = now
        for event in events {
            settler.record(event, at: clock)
            clock = clock.advanced(by: .microseconds(1))
        }
        clock = clock.advanced(by: Self.settle)
        now = clock.advanced(by: .microseconds(1))
        return settler.takeDue(at: clock).count
    }
}

func registerSettleBenchmarks() {
    let fixture = SettleFixture()
    Benchmark(
        "Settle: ChangeSettler record + takeDue (per kernel event)",
        configuration: .init(scalingFactor: .kilo, setup: { try fixture.setUp(count: BenchmarkScalingFactor.kilo.rawValue) })
    ) { benchmark in
        guard var settler = fixture.settler else { fatalError("the settle benchmark's setup did not run") }
        fixture.settler = nil  // keep the settler's storage uniquely referenced while it is mutated
        let settled = fixture.runBatch(&settler)
        fixture.settler = settler
        if settled != fixture.expectedChanges {
            fatalError("the settler settled \(settled) changes, expected \(fixture.expectedChanges)")
        }
    }
}
