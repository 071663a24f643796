import AutosaveControl
import AutosaveKit
import Synchronization

/// What changed in the project since a coding agent last asked: external edits (a person's
/// editor saving, `git`, `sed`) and edits other clients made through the agent, each numbered so
/// that `changes {since}` returns only what is new.
///
/// Filled from the agent's events on a subscription of its own; the session's own edits are left
/// out. Holds the newest `capacity` entries. A subscription that ended and began again (the agent
/// stopped and another took over) leaves a gap: what changed between is not known, and `entries`
/// says so to every cursor from before it.
final class ChangeLog: Sendable {
    struct Entry: Sendable {
        var number: Int
        var path: String
        var kind: String
        var revision: Int?
        var who: String
        var from: String?
        var copy: String?
    }

    private struct State {
        var entries: [Entry] = []
        var next = 1
        var dropped = 0
        var isFollowing = false
        var ending: String?
        /// Which subscription is the current one: an older one's end is not news.
        var generation = 0
        /// The cursor each gap came after.
        var gaps: [Int] = []
    }

    private let state = Mutex(State())
    private let own = Mutex("mcp")
    let capacity: Int

    /// The name the session's own edits carry (`mcp:<client>`): those are not news to it.
    var ownName: String {
        get { own.withLock { $0 } }
        set { own.withLock { $0 = newValue } }
    }

    init(capacity: Int = 10_000) { self.capacity = capacity }

    /// Takes one `event` notification's params.
    func take(_ event: JSONValue) {
        let ownName = self.ownName
        guard let name = event["event"]?.stringValue, let path = event["path"]?.stringValue else { return }
        let revision = event["revision"].flatMap { if case .number(let text) = $0 { Int(text) } else { nil } }
        var entry: Entry
        switch name {
        case "external-change":
            if event["directory"] == .bool(true) { return }
            entry = Entry(number: 0, path: path, kind: event["kind"]?.stringValue ?? "modified", who: "external")
            entry.from = event["from"]?.stringValue
        case "edited":
            let client = event["client"]?.stringValue ?? "client"
            guard client != ownName else { return }
            entry = Entry(number: 0, path: path, kind: "edited", revision: revision, who: client)
        case "merged":
            entry = Entry(number: 0, path: path, kind: "merged", revision: revision, who: "external")
        case "conflict":
            entry = Entry(number: 0, path: path, kind: "conflict", who: "external")
            entry.copy = event["copy"]?.stringValue
        default:
            return
        }
        state.withLock { state in
            entry.number = state.next
            state.next += 1
            state.entries.append(entry)
            if state.entries.count > capacity {
                state.entries.removeFirst(state.entries.count - capacity)
                state.dropped += 1
            }
        }
    }

    /// The entries after `since` (all when nil), the cursor to pass next time, whether some after
    /// `since` were dropped already, and whether a gap (no subscription for a while) came after it.
    func entries(since: Int?) -> (entries: [Entry], cursor: Int, isIncomplete: Bool, hasGap: Bool) {
        state.withLock { state in
            let since = since ?? 0
            let kept = state.entries.filter { $0.number > since }
            let oldest = state.entries.first?.number ?? state.next
            return (kept, state.next - 1, since + 1 < oldest && state.dropped > 0, state.gaps.contains { $0 >= since })
        }
    }

    /// Whether the subscription is up; why it ended, when it did.
    var following: (isFollowing: Bool, ending: String?) { state.withLock { ($0.isFollowing, $0.ending) } }

    /// A subscription began: its number, for `ended`. After one that ended, a gap is marked.
    func started() -> Int {
        state.withLock { state in
            if state.ending != nil { state.gaps.append(state.next - 1) }
            state.isFollowing = true
            state.ending = nil
            state.generation += 1
            return state.generation
        }
    }

    /// Subscription `generation` ended, for the reason `why`.
    func ended(_ generation: Int, _ why: String) {
        state.withLock { state in
            guard state.generation == generation else { return }
            state.isFollowing = false
            state.ending = why
        }
    }
}
