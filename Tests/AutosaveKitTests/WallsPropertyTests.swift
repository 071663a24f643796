import AutosaveTestKit
import Foundation
import PropertyBased
import Testing

@_spi(Testing) @testable import AutosaveKit

/// The walls (issue 32): no path a client names leads out of the root, into `.git/` or into the
/// state directory — not through a symlink to a file or a folder, not one swapped in later — and
/// names equal as Unicode but different as bytes are different files.
///
/// Each scenario builds a random tree in a fresh home folder: the project (`home/project`, the
/// root) and an `outside` folder beside it, with files holding unique sentinel contents, `.git/`,
/// a state directory with files the agent does not own, NFC/NFD twin names, and relative and
/// absolute symlinks to files and folders inside, outside, into `.git/` and the state directory,
/// dangling, chained, and with `..` after them. Then random steps: every public request of
/// `Workspace` with paths drawn from those names (and `..`, absolute and `/`+U+0301 forms of them),
/// swaps between requests (a file replaced by a link, a folder by a link, a link retargeted or
/// renamed over a file, a state-dir folder replaced by a link), outside edits, and time moved on
/// so autosaves, reloads and merges happen. After every step:
///
/// - (a) every entry outside the project, under `.git/`, and in the state directory other than
///   the agent's own (journal, conflict copies) is as before: same kind, same link target, same
///   bytes;
/// - (b) no answer (content, status, or an error's text) carries a sentinel of a file outside the
///   root, in `.git/` or in the state directory, unless the request itself sent it;
/// - (c) a twin's file holds no bytes a request addressed to its twin, and a read of one twin never
///   answers with the other's bytes.
///
/// Refusals are fine and only counted: the test says where bytes went, never what a refusal says.
@Suite struct WallsPropertyTests {
    /// What goes in a tree: 2 to 12 plantings (links, twins, state-dir links), each a code.
    static let trees = Gen.int(in: 0...999_999).array(of: 2...12)
    /// What happens to it: 4 to 28 steps, each a code.
    static let steps = Gen.int(in: 0...999_999).array(of: 4...28)

    /// How many fixed scenarios CI runs.
    static var fixedScenarioCount: Int { 80 }

    /// CI: the same scenarios every run, from a fixed seed. A failure names its scenario as
    /// `AUTOSAVE_WALLS_SCENARIO="tree codes / step codes"`, which replays it alone (with
    /// `AUTOSAVE_WALLS_VERBOSE=1` to print each step and what it did, `AUTOSAVE_SCENARIO_LOGS=1`
    /// for the agent's log, `AUTOSAVE_TRACE_FILE` to trace steps).
    @Test(.timeLimit(.minutes(10))) func noRequestReachesThroughTheWallsInFixedScenarios() async throws {
        let tally = WallsTally()
        if let replay = ProcessInfo.processInfo.environment["AUTOSAVE_WALLS_SCENARIO"] {
            let (tree, steps) = WallsScenario.parse(replay)
            try await WallsScenario.run(tree: tree, steps: steps, label: "replayed scenario", tally: tally)
            return
        }
        var random = Xoshiro(seed: (0x7761_6C6C, 0x7321_3332, 0x6973_7375, 0x6521_2121))
        for index in 0..<Self.fixedScenarioCount {
            let tree = Self.trees.run(using: &random)
            let steps = Self.steps.run(using: &random)
            try await WallsScenario.run(tree: tree, steps: steps, label: "fixed scenario \(index)", tally: tally)
        }
        // The generator must keep reaching the places the walls guard: requests accepted through
        // links, swaps made, and twins addressed. A generator that only made refused requests
        // would pass against any agent.
        #expect(tally.accepted > 100, "only \(tally.accepted) requests were accepted: \(tally.summary)")
        #expect(tally.swaps > 20, "only \(tally.swaps) swaps were made: \(tally.summary)")
        #expect(tally.twinRequests > 10, "only \(tally.twinRequests) requests named a twin: \(tally.summary)")
        #expect(tally.linkRequests > 50, "only \(tally.linkRequests) requests went through a link: \(tally.summary)")
        #expect(tally.restarts > 10, "only \(tally.restarts) restarts: \(tally.summary)")
        #expect(tally.conflictCopies > 3, "only \(tally.conflictCopies) conflict copies: \(tally.summary)")
        print("WallsPropertyTests: \(Self.fixedScenarioCount) fixed scenarios: \(tally.summary)")
    }

    /// The holes of issue 32 as exploration found them on main (2026-11-27), each a scenario of
    /// this generator (`tree codes / step codes`; 1000000 plants nothing and keeps the others'
    /// names): replayed alone on every run, so each hole has a test of its own that fails until
    /// it is closed. A change to the generator changes what the codes mean: find them again with
    /// `AUTOSAVE_WALLS_SHRINK`, and read one with `AUTOSAVE_WALLS_VERBOSE=1`.
    static let knownHoles: [KnownHole] = [
        // (1) write through l0b.txt → .git/config: git's config replaced.
        KnownHole("a link to .git/config is written through", "947930,821969,872311 / 568642"),
        // (1) write through l0.txt → .git/hooks/pre-commit (dangling): the hook is created.
        KnownHole(
            "a dangling link into .git/hooks creates the hook",
            "850235,943115,708257,897141,238672,682225,39878 / 859954"),
        // (1) write through d/l8.txt → ../.autosave/agent.lock: the lock overwritten.
        KnownHole(
            "a link to the state dir's lock is written through",
            "979156,987063,594218,627046,728081,934571,147566,347794,185468 / 299820"),
        // (1) write through d/l5.txt → .autosave/conflicts/keep…: an old conflict copy overwritten.
        KnownHole("a link to a conflict copy is written through", "685418,965860,142724,865611,742617,653576 / 769212"),
        // (1) patch creating l0.txt, a dangling link to .autosave/new.txt: a file made in the state dir.
        KnownHole(
            "a dangling link into the state dir makes a file there", "159644,278116,786278,212796,266995 / 557494"),
        // (1) write through d/l2.txt → .autosave/journal/journal.log, then kill -9: recovery
        // saves it over the journal.
        KnownHole("a link to the journal is written through", "237742,964278,216356,994073,415207 / 665326,268442"),
        // (2) a.txt edited, then replaced by a link to ../outside/secret.txt: read answers it.
        KnownHole("a file swapped for a link out is read through", "199477,662627,293261 / 298542,958832"),
        // (2) cafe\u{301}.txt open, then replaced by a link to .git/HEAD: read answers it.
        KnownHole("a file swapped for a link into .git is read through", "835635 / 336712,833694"),
        // (1)(2) a patch whose file is a link into the state dir: the refusal quotes its line.
        KnownHole("a refused patch quotes a line read through a link", "902487 / 907320,567345"),
        // (1)(2) a.txt written, kill -9, a.txt replaced by a dangling link to .git/hooks/pre-commit,
        // restart: recovery creates the hook.
        KnownHole("recovery writes through a link swapped in while the agent was down", "1000000 / 1095,6383"),
        // … replaced by a link to .git/config: recovery reads git's config into the buffer.
        KnownHole("recovery reads through a link swapped in while the agent was down", "1000000 / 1095,587"),
        // (4) .autosave/journal → ../outside/…: the journal is written outside at start.
        KnownHole("a journal folder that is a link out", "583662 / "),
        // (4) .autosave → ../outside/…: journal (and in the agent, lock and socket) outside.
        KnownHole("a state directory that is a link out", "362382 / "),
        // (4) .autosave/conflicts → outside: a conflict copy's folder is made outside (the copy
        // itself is refused).
        KnownHole(
            "a conflicts folder that is a link out", "850235,943115,708257,897141,238672,20610,682225,39878 / 592623"),
        // (5) re\u{301}sume\u{301}.md open, then r\u{e9}sum\u{e9}.md written: the write lands in the NFD file.
        KnownHole("an NFC write goes to the open NFD twin", "701788 / 686992"),
        // (5) cafe\u{301}.txt written, then caf\u{e9}.txt written: both are one buffer, one file.
        KnownHole("NFC and NFD twins at the root are one buffer", "372339,239152 / 96750,613077"),
        // (5) a patch creating .git/\u{301}x/new.txt: `/`+U+0301 is one Character, so no
        // component is `.git`, and the kernel makes .git/\u{301}x/new.txt.
        KnownHole("a `/` followed by U+0301 hides .git from the check", "159644,786278,212796,266995 / 766150"),
    ]

    @Test(arguments: knownHoles) func theHolesOfIssue32StayClosed(_ hole: KnownHole) async throws {
        let (tree, steps) = WallsScenario.parse(hole.scenario)
        try await WallsScenario.run(tree: tree, steps: steps, label: "known hole: \(hole.name)", tally: WallsTally())
    }

    /// Shrinks one scenario to the fewest plantings and steps that still break an invariant whose
    /// message contains `AUTOSAVE_WALLS_SHRINK` (a substring such as `.git/config in .git/`):
    /// `AUTOSAVE_WALLS_SCENARIO="…" AUTOSAVE_WALLS_SHRINK="…" swift test --filter shrinkOneScenario`.
    /// A tool for reading a failure, not a check.
    @Test(.enabled(if: ProcessInfo.processInfo.environment["AUTOSAVE_WALLS_SHRINK"] != nil))
    func shrinkOneScenario() async throws {
        let environment = ProcessInfo.processInfo.environment
        let signature = environment["AUTOSAVE_WALLS_SHRINK"] ?? ""
        var (tree, steps) = WallsScenario.parse(environment["AUTOSAVE_WALLS_SCENARIO"] ?? "")
        func fails(_ tree: [Int], _ steps: [Int]) async throws -> Bool {
            try await WallsScenario.findings(tree: tree, steps: steps).contains { $0.contains(signature) }
        }
        guard try await fails(tree, steps) else {
            Issue.record("the scenario does not break an invariant matching \(signature.debugDescription)")
            return
        }
        var shrunk = true
        while shrunk {
            shrunk = false
            for index in stride(from: steps.count - 1, through: 0, by: -1) where index < steps.count {
                var fewer = steps
                fewer.remove(at: index)
                if try await fails(tree, fewer) { steps = fewer; shrunk = true }
            }
            for index in stride(from: tree.count - 1, through: 0, by: -1) where index < tree.count {
                var fewer = tree
                fewer.remove(at: index)
                if try await fails(fewer, steps) {
                    tree = fewer
                    shrunk = true
                    continue
                }
                // Kept in place but planting nothing: the plantings after it keep their names.
                guard tree[index] != WallsScenario.noPlanting else { continue }
                var inert = tree
                inert[index] = WallsScenario.noPlanting
                if try await fails(inert, steps) { tree = inert; shrunk = true }
            }
        }
        let found = try await WallsScenario.findings(tree: tree, steps: steps, verbose: true)
        print(
            "shrunk: AUTOSAVE_WALLS_SCENARIO=\"\(tree.map(String.init).joined(separator: ",")) / \(steps.map(String.init).joined(separator: ","))\""
        )
        for finding in found { print("finding: \(finding)") }
    }

    /// Exploration with fresh seeds, on demand (`AUTOSAVE_PROPERTY_CASES=200 swift test --filter
    /// WallsPropertyTests`): shrinks a failure and prints its seed; replay the scenario it names
    /// with `AUTOSAVE_WALLS_SCENARIO`. Not in CI, where a fresh case would fail an unrelated change.
    @Test(.enabled(if: ProcessInfo.processInfo.environment["AUTOSAVE_PROPERTY_CASES"] != nil))
    func noRequestReachesThroughTheWallsInRandomScenarios() async {
        let cases = ProcessInfo.processInfo.environment["AUTOSAVE_PROPERTY_CASES"].flatMap(Int.init) ?? 0
        let tally = WallsTally()
        await propertyCheck(count: cases, input: Self.trees, Self.steps) { tree, steps in
            do {
                try await WallsScenario.run(tree: tree, steps: steps, label: "random scenario", tally: tally)
            } catch {
                Issue.record("scenario failed to run: \(error)")
            }
        }
    }
}

/// A scenario that once broke a wall, by name.
struct KnownHole: Sendable, CustomTestStringConvertible {
    var name: String
    var scenario: String
    init(_ name: String, _ scenario: String) {
        self.name = name
        self.scenario = scenario
    }
    var testDescription: String { name }
}

// MARK: - Paths as bytes

/// A path as the kernel sees it: bytes. Never compared as `String` (canonical equivalence makes
/// NFC and NFD twins equal there).
struct RawPath: Hashable, Comparable, CustomStringConvertible {
    var bytes: [UInt8]
    init(_ text: String) { bytes = Array(text.utf8) }
    init(bytes: [UInt8]) { self.bytes = bytes }
    var text: String { String(decoding: bytes, as: UTF8.self) }
    var description: String {
        // Combining marks and other non-ASCII shown escaped, so NFC and NFD read differently.
        text.unicodeScalars.map { $0.isASCII ? String($0) : "\\u{\(String($0.value, radix: 16))}" }.joined()
    }
    static func < (lhs: RawPath, rhs: RawPath) -> Bool { lhs.bytes.lexicographicallyPrecedes(rhs.bytes) }
    func appending(_ name: String) -> RawPath { RawPath(bytes: bytes + [UInt8(ascii: "/")] + Array(name.utf8)) }
    func starts(with other: RawPath) -> Bool {
        bytes == other.bytes
            || (bytes.starts(with: other.bytes) && bytes.dropFirst(other.bytes.count).first == UInt8(ascii: "/"))
    }
    /// The parent and the last component, split at the last `/` byte as the kernel splits.
    var split: (parent: RawPath, name: [UInt8]) {
        guard let slash = bytes.lastIndex(of: UInt8(ascii: "/")) else { return (RawPath(bytes: []), bytes) }
        return (RawPath(bytes: slash == 0 ? [UInt8(ascii: "/")] : Array(bytes[..<slash])), Array(bytes[(slash + 1)...]))
    }
}

/// One entry of a guarded place, as `lstat` and `readlink` see it.
enum WallEntry: Equatable, CustomStringConvertible {
    case file([UInt8])
    case directory
    case link([UInt8])
    case other

    var description: String {
        switch self {
        case .file(let bytes): "file \(String(decoding: bytes.prefix(60), as: UTF8.self).debugDescription)"
        case .directory: "folder"
        case .link(let target): "link → \(RawPath(bytes: target))"
        case .other: "other (socket, fifo)"
        }
    }
}

enum Disk {
    static func entry(_ path: String) -> WallEntry? {
        var status = stat()
        guard lstat(path, &status) == 0 else { return nil }
        switch status.st_mode & S_IFMT {
        case S_IFDIR: return .directory
        case S_IFLNK: return .link(linkTarget(path) ?? [])
        case S_IFREG:
            let fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
            guard fd >= 0 else { return .file([]) }
            defer { close(fd) }
            var bytes: [UInt8] = []
            var chunk = [UInt8](repeating: 0, count: 65536)
            while true {
                let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                if count <= 0 { break }
                bytes += chunk[..<count]
            }
            return .file(bytes)
        default: return .other
        }
    }

    static func linkTarget(_ path: String) -> [UInt8]? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = readlink(path, &buffer, buffer.count - 1)
        guard count >= 0 else { return nil }
        return buffer[..<count].map { UInt8(bitPattern: $0) }
    }

    static func isDirectory(_ path: String) -> Bool { entry(path) == .directory }
    static func isLink(_ path: String) -> Bool { if case .link = entry(path) { true } else { false } }
    static func isFile(_ path: String) -> Bool { if case .file = entry(path) { true } else { false } }

    /// Every entry at and below `path` (not following links), keyed by its path.
    static func walk(
        _ path: RawPath, into result: inout [RawPath: WallEntry], skipping skip: (RawPath) -> Bool = { _ in false }
    ) {
        guard !skip(path), let entry = entry(path.text) else { return }
        result[path] = entry
        guard entry == .directory, let directory = opendir(path.text) else { return }
        defer { closedir(directory) }
        while let item = readdir(directory) {
            let name: [UInt8] = withUnsafeBytes(of: item.pointee.d_name) { raw in
                Array(raw.prefix { $0 != 0 })
            }
            if name == [UInt8(ascii: ".")] || name == [UInt8(ascii: "."), UInt8(ascii: ".")] { continue }
            walk(RawPath(bytes: path.bytes + [UInt8(ascii: "/")] + name), into: &result, skipping: skip)
        }
    }

    /// `realpath(3)`; nil when some part does not exist.
    static func real(_ path: RawPath) -> RawPath? {
        guard let resolved = realpath(path.text, nil) else { return nil }
        defer { free(resolved) }
        return RawPath(bytes: Array(String(cString: resolved).utf8))
    }

    /// Where `open(path, O_CREAT)` would land: every link followed, a dangling one to where it
    /// points, as the kernel does. Nil when its folder does not exist.
    static func kernelTarget(_ absolute: RawPath) -> RawPath? {
        var path = absolute
        for _ in 0..<40 {
            if let real = real(path) { return real }
            let (parent, name) = path.split
            guard let folder = real(parent) else { return nil }
            let candidate = RawPath(bytes: folder.bytes + [UInt8(ascii: "/")] + name)
            guard case .link(let target) = entry(candidate.text) else { return candidate }
            path =
                target.first == UInt8(ascii: "/")
                ? RawPath(bytes: target) : RawPath(bytes: folder.bytes + [UInt8(ascii: "/")] + target)
        }
        return nil
    }

    static func write(_ path: String, _ text: String) {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { return }
        defer { close(fd) }
        _ = Array(text.utf8).withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
    }

    static func makeFolders(_ path: String) {
        var current = ""
        for part in path.utf8.split(separator: UInt8(ascii: "/")) {
            current += "/" + String(decoding: part, as: UTF8.self)
            mkdir(current, 0o755)
        }
    }

    /// The link text that leads from a link in `folder` to `target` (both absolute, physical).
    static func relative(from folder: RawPath, to target: RawPath) -> String {
        let from = folder.bytes.split(separator: UInt8(ascii: "/")).map(Array.init)
        let to = target.bytes.split(separator: UInt8(ascii: "/")).map(Array.init)
        var common = 0
        while common < from.count, common < to.count, from[common] == to[common] { common += 1 }
        let up = Array(repeating: "..", count: from.count - common)
        let down = to[common...].map { String(decoding: $0, as: UTF8.self) }
        let parts = up + down
        return parts.isEmpty ? "." : parts.joined(separator: "/")
    }
}

// MARK: - Counting

/// What the scenarios did, to show the generator reaches the walls.
final class WallsTally: @unchecked Sendable {
    // Touched from the test's task only.
    var accepted = 0
    var refused: [String: Int] = [:]
    var swaps = 0
    var twinRequests = 0
    var linkRequests = 0
    var violations: [String: Int] = [:]
    var restarts = 0
    var refusedStarts = 0
    var conflictCopies = 0

    var summary: String {
        "accepted \(accepted), refused \(refused.sorted { $0.key < $1.key }), swaps \(swaps), twin requests \(twinRequests), "
            + "requests through links \(linkRequests), restarts \(restarts), starts refused \(refusedStarts), conflict copies \(conflictCopies), violations \(violations.sorted { $0.key < $1.key })"
    }
}

// MARK: - One scenario

/// One random tree and the steps on it, with the snapshots the invariants compare against.
final class WallsScenario: @unchecked Sendable {
    // Touched only from the test's task, one step at a time.
    let home: TemporaryDirectory
    let root: RawPath
    let outside: RawPath
    let label: String
    let tally: WallsTally
    var harness: WorkspaceHarness!
    /// The paths clients name (relative to the root, or absolute).
    var pool: [String] = []
    /// Links the tree holds (relative to the root), which swaps retarget.
    var links: [String] = []
    /// Files inside the root a tool may edit or replace (relative to the root).
    var insideFiles = ["a.txt", "d/b.txt", "d/e/c.txt"]
    /// Every twin's absolute path and its twin's.
    var twinOf: [RawPath: RawPath] = [:]
    /// Which twin file a token was meant for: the file the kernel would have opened for the
    /// path the request named, when that is a twin.
    var ownerOf: [String: RawPath] = [:]
    /// The guarded places as they were (outside, `.git/`, the state directory).
    var baseline: [RawPath: WallEntry] = [:]
    /// State-directory entries the agent does not own (there before it started, or put there by a swap).
    var planted: Set<RawPath> = []
    var counter = 0
    var stepIndex = -1
    var stepNote = ""
    var recorded = 0
    var reported: Set<String> = []
    /// The sentinels of the tree: no answer may carry one the request did not send.
    static let sentinelMarks = ["OUTSIDE-SENTINEL-", "GIT-SENTINEL-", "STATE-SENTINEL-"]
    var verbose = ProcessInfo.processInfo.environment["AUTOSAVE_WALLS_VERBOSE"] != nil
    /// Findings are only collected, not recorded as issues (shrinking).
    var isQuiet = false
    var findings: [String] = []

    var state: RawPath { root.appending(".autosave") }
    var git: RawPath { root.appending(".git") }

    init(label: String, tally: WallsTally) throws {
        home = try TemporaryDirectory(prefix: "autosave-walls")
        root = RawPath(home.path).appending("project")
        outside = RawPath(home.path).appending("outside")
        self.label = label
        self.tally = tally
    }

    static func parse(_ text: String) -> ([Int], [Int]) {
        let halves = text.split(separator: "/", omittingEmptySubsequences: false)
        func numbers(_ part: Substring?) -> [Int] {
            (part ?? "").split(whereSeparator: { $0 == "," || $0 == " " || $0 == "[" || $0 == "]" }).compactMap {
                Int($0)
            }
        }
        return (numbers(halves.first), numbers(halves.count > 1 ? halves[1] : nil))
    }

    /// The broken invariants of one scenario, recorded nowhere (for shrinking).
    static func findings(tree: [Int], steps: [Int], verbose: Bool = false) async throws -> [String] {
        let scenario = try WallsScenario(label: "shrinking", tally: WallsTally())
        scenario.isQuiet = true
        scenario.verbose = verbose
        try await scenario.run(tree: tree, steps: steps)
        return scenario.findings
    }

    static func run(tree: [Int], steps: [Int], label: String, tally: WallsTally) async throws {
        let scenario = try WallsScenario(
            label:
                "\(label) AUTOSAVE_WALLS_SCENARIO=\"\(tree.map(String.init).joined(separator: ",")) / \(steps.map(String.init).joined(separator: ","))\"",
            tally: tally)
        try await scenario.run(tree: tree, steps: steps)
    }

    func note(_ text: String) {
        traceLine("  \(text)")
        if verbose { print("[walls] \(text)") }
    }

    func run(tree: [Int], steps: [Int]) async throws {
        buildSkeleton()
        for (index, code) in tree.enumerated() { plant(code, index: index) }
        // Without duplicates, compared as bytes (a `Set<String>` would merge the twins).
        var seen: Set<RawPath> = []
        pool = pool.filter { seen.insert(RawPath($0)).inserted }
        takeBaseline()
        if verbose { note("tree: \(describeTree())") }
        stepIndex = -1
        stepNote = "the agent's start (journal opened, tree scanned)"
        do {
            harness = try await Self.startHarness(root: root, state: state)
        } catch {
            // An agent may refuse a hostile state directory; refusing writes nothing, which the disk shows.
            note("the start was refused: \(error)")
            tally.refusedStarts += 1
            checkDisk()
            return
        }
        await checkWalls(answers: [], sent: [])
        for (index, code) in steps.enumerated() {
            stepIndex = index
            traceLine("\(label): step \(index) code \(code)")
            let (answers, sent) = await perform(code)
            guard harness != nil else {
                // A restart the agent refused: nothing more can be asked of it.
                checkDisk()
                return
            }
            await checkWalls(answers: answers, sent: sent)
        }
        // The end: everything settled, every due autosave made, then the flush of a shutdown.
        stepIndex = steps.count
        stepNote = "settle, autosave, then shutdown's flush"
        await harness.settleExternalChanges()
        try? await harness.advance(by: .milliseconds(30_000))
        await harness.settleExternalChanges()
        await checkWalls(answers: [], sent: [])
        if ProcessInfo.processInfo.environment["AUTOSAVE_SCENARIO_LOGS"] != nil {
            for log in harness.logs.elements { print("LOG", log) }
        }
        countConflictCopies()
        await harness.stop()
        checkDisk()
        checkTwinsOnDisk()
    }

    // MARK: - The tree

    func token(_ kind: String) -> String {
        counter += 1
        return "\(kind)-\(counter)"
    }

    func buildSkeleton() {
        let r = root.text
        let o = outside.text
        for folder in [
            r, r + "/d/e", r + "/.git/hooks", r + "/.git/objects", r + "/.autosave/conflicts", o + "/dir/sub",
        ] {
            Disk.makeFolders(folder)
        }
        for name in ["a.txt", "d/b.txt", "d/e/c.txt"] { Disk.write(r + "/" + name, token("INSIDE") + "\n") }
        Disk.write(r + "/.git/config", "[core]\n\t" + token("GIT-SENTINEL") + "\n")
        Disk.write(r + "/.git/HEAD", token("GIT-SENTINEL") + "\n")
        Disk.write(r + "/.git/hooks/pre-push.sample", token("GIT-SENTINEL") + "\n")
        // Stand-ins for the agent's lock (an in-process Workspace takes none) and an old conflict copy.
        Disk.write(r + "/.autosave/agent.lock", token("STATE-SENTINEL") + "\n")
        Disk.write(r + "/.autosave/conflicts/keep.txt.20240101-000000.1", token("STATE-SENTINEL") + "\n")
        Disk.write(o + "/secret.txt", token("OUTSIDE-SENTINEL") + "\n")
        Disk.write(o + "/dir/inner.txt", token("OUTSIDE-SENTINEL") + "\n")
        Disk.write(o + "/dir/sub/deep.txt", token("OUTSIDE-SENTINEL") + "\n")
        pool = [
            "a.txt", "d/b.txt", "d/e/c.txt", "new.txt", "d/new.txt", "nd/new.txt", "./a.txt", "d/../a.txt",
            "d/e/../b.txt",
            ".git/config", ".git/hooks/pre-commit", ".git/HEAD", ".autosave/agent.lock", ".autosave/new.txt",
            ".autosave/conflicts/keep.txt.20240101-000000.1", "../outside/secret.txt", "../outside/new.txt",
            "../new.txt",
            "d/e/../../../outside/dir/inner.txt", outside.text + "/secret.txt", outside.text + "/dir/new.txt",
            // A `/` then U+0301 is one Character to Swift but a separator to the kernel.
            ".git/\u{301}x.txt", ".autosave/\u{301}x.txt", "d/\u{301}x.txt", ".git/hooks/\u{301}pre-commit",
            ".git/\u{301}x/new.txt", ".autosave/\u{301}x/new.txt", "d/\u{301}x/new.txt",
        ]
    }

    static let noPlanting = 1_000_000

    /// Where links may point: (name, absolute target, is a folder).
    var fileTargets: [RawPath] {
        [
            root.appending("a.txt"), root.appending("d/b.txt"), outside.appending("secret.txt"),
            outside.appending("dir/inner.txt"),
            git.appending("config"), git.appending("HEAD"), git.appending("hooks/pre-commit"),
            state.appending("agent.lock"),
            state.appending("new.txt"), state.appending("conflicts/keep.txt.20240101-000000.1"),
            state.appending("journal/journal.log"), outside.appending("missing.txt"),
            outside.appending("nodir/x.txt"), root.appending("d/missing.txt"),
        ]
    }

    var folderTargets: [RawPath] {
        [
            root.appending("d"), root.appending("d/e"), outside, outside.appending("dir"), git, git.appending("hooks"),
            state,
            state.appending("conflicts"), outside.appending("nodir"),
        ]
    }

    /// Names a request may append to a link to `folder`.
    func children(of folder: RawPath) -> [String] {
        let last = folder.split.name
        switch String(decoding: last, as: UTF8.self) {
        case "d": return ["b.txt", "new.txt", "e/c.txt", "../a.txt", "\u{301}x.txt"]
        case "e": return ["c.txt", "../b.txt", "../../a.txt", "new.txt"]
        case "outside": return ["secret.txt", "new.txt", "dir/inner.txt"]
        case "dir": return ["inner.txt", "new.txt", "../secret.txt", "sub/deep.txt", "\u{301}x.txt"]
        case ".git": return ["config", "hooks/pre-commit", "new.txt", "\u{301}x.txt", "\u{301}x/new.txt", "../a.txt"]
        case "hooks": return ["pre-commit", "pre-push.sample", "../config", "\u{301}pre-commit", "\u{301}x/pre-commit"]
        case ".autosave":
            return ["agent.lock", "new.txt", "\u{301}x.txt", "\u{301}x/new.txt", "conflicts/x.txt", "../a.txt"]
        case "conflicts": return ["keep.txt.20240101-000000.1", "x.txt", "../agent.lock"]
        default: return ["x.txt"]
        }
    }

    /// Makes a symlink at `name` (relative to the root) to `target`, its text relative or absolute.
    func makeLink(_ name: String, to target: RawPath, absolute: Bool) {
        let at = root.appending(name)
        let folder = Disk.real(at.split.parent) ?? at.split.parent
        let text = absolute ? target.text : Disk.relative(from: folder, to: target)
        unlink(at.text)
        symlink(text, at.text)
        if !links.contains(name) { links.append(name) }
    }

    /// One planting: a link of some kind, twins, or a link in the state directory.
    func plant(_ code: Int, index: Int) {
        // Past the generator's range: plants nothing (the shrinker's way to drop a planting and
        // keep the names of the others, which count plantings).
        guard code < Self.noPlanting else { return }
        var r = splitMix(code)
        let kind = code % 12
        let folder = r.below(3) == 0 ? "d/" : ""
        let absolute = r.below(2) == 0
        let name = "\(folder)l\(index)"
        switch kind {
        case 0, 7, 8, 9, 11:
            // A link to a file; 7: into .git, 8: into the state dir, 9: outside, 11: dangling.
            let choices: [RawPath] =
                switch kind {
                case 7: [git.appending("config"), git.appending("hooks/pre-commit"), git.appending("HEAD")]
                case 8:
                    [
                        state.appending("agent.lock"), state.appending("new.txt"),
                        state.appending("conflicts/keep.txt.20240101-000000.1"),
                        state.appending("journal/journal.log"),
                    ]
                case 9:
                    [outside.appending("secret.txt"), outside.appending("dir/inner.txt"), outside.appending("new.txt")]
                case 11:
                    [
                        outside.appending("missing.txt"), root.appending("d/missing.txt"),
                        git.appending("hooks/pre-commit"), state.appending("new.txt"),
                    ]
                default: fileTargets
                }
            makeLink(name + ".txt", to: choices[r.below(choices.count)], absolute: absolute)
            pool += [name + ".txt", "d/../" + name + ".txt"]
        case 1:
            let target = folderTargets[r.below(folderTargets.count)]
            makeLink(name, to: target, absolute: absolute)
            pool += children(of: target).map { name + "/" + $0 }
        case 2:
            // A chain: name → name-b → a target.
            let isFolder = r.below(2) == 0
            let target = isFolder ? folderTargets[r.below(folderTargets.count)] : fileTargets[r.below(fileTargets.count)]
            let suffix = isFolder ? "" : ".txt"
            makeLink(name + "b" + suffix, to: target, absolute: absolute)
            makeLink(name + suffix, to: root.appending(name + "b" + suffix), absolute: r.below(2) == 0)
            pool += isFolder ? children(of: target).map { name + "/" + $0 } : [name + suffix, name + "b" + suffix]
        case 3, 4, 5:
            // NFC/NFD twins: at the root, in d/, or as twin folders; both, or one of them.
            let (nfc, nfd): (String, String) =
                switch kind {
                case 3: ("caf\u{E9}.txt", "cafe\u{301}.txt")
                case 4: ("d/r\u{E9}sum\u{E9}.md", "d/re\u{301}sume\u{301}.md")
                default: ("na\u{EF}ve/x.txt", "nai\u{308}ve/x.txt")
                }
            let which = r.below(3)
            for (spelling, exists) in [(nfc, which != 2), (nfd, which != 1)] {
                let path = root.appending(spelling)
                if exists, Disk.entry(path.text) == nil {
                    Disk.makeFolders(path.split.parent.text)
                    let text = token("TWIN")
                    Disk.write(path.text, text + "\n")
                    ownerOf[text] = path
                }
            }
            twinOf[root.appending(nfc)] = root.appending(nfd)
            twinOf[root.appending(nfd)] = root.appending(nfc)
            pool += [nfc, nfd, "./" + nfd, root.appending(nfc).text]
            if !insideFiles.contains(where: { RawPath($0) == RawPath(nfc) }) { insideFiles += [nfc, nfd] }
        case 6:
            // A state-directory component that is a symlink.
            Disk.makeFolders(outside.text + "/state-links")
            switch r.below(5) {
            case 0:
                let target = outside.appending("state-links/journal")
                Disk.makeFolders(target.text)
                if Disk.entry(state.appending("journal").text) == nil {
                    symlink(target.text, state.appending("journal").text)
                }
            case 1:
                let target = outside.appending("state-links/conflicts")
                Disk.makeFolders(target.text)
                if Disk.isDirectory(state.appending("conflicts").text) {
                    rename(state.appending("conflicts").text, target.text + "-old")
                    symlink(target.text, state.appending("conflicts").text)
                }
            case 2, 3:
                // conflicts/d (or conflicts/na…ve) → outside, or into .git
                let target = r.below(2) == 0 ? outside.appending("state-links/d") : git.appending("objects")
                Disk.makeFolders(target.text)
                let at = state.appending("conflicts/d")
                if Disk.isDirectory(state.appending("conflicts").text), Disk.entry(at.text) == nil {
                    symlink(target.text, at.text)
                }
            default:
                // The whole state directory.
                if Disk.isDirectory(state.text) {
                    let target = outside.appending("state-links/state")
                    rename(state.text, target.text)
                    symlink(Disk.relative(from: root, to: target), state.text)
                }
            }
        default:
            // 10: `..` after a link: the kernel takes it from where the link leads.
            let targets = [
                root.appending("d/e"), outside.appending("dir"), git.appending("hooks"), outside.appending("dir/sub"),
            ]
            let target = targets[r.below(targets.count)]
            makeLink(name, to: target, absolute: absolute)
            pool += [
                name + "/../b.txt", name + "/../../a.txt", name + "/../secret.txt", name + "/../config",
                name + "/../inner.txt",
            ]
        }
    }

    func describeTree() -> String {
        var all: [RawPath: WallEntry] = [:]
        Disk.walk(RawPath(home.path), into: &all)
        return all.keys.sorted().compactMap { key -> String? in
            guard case .link(let target) = all[key]! else { return nil }
            return "\(RawPath(bytes: Array(key.bytes.dropFirst(home.path.utf8.count + 1)))) → \(RawPath(bytes: target))"
        }.joined(separator: ", ")
    }

    // MARK: - Snapshots

    /// Outside the root (all of home but the project), `.git/`, and the state directory.
    func guardedEntries() -> [RawPath: WallEntry] {
        var entries: [RawPath: WallEntry] = [:]
        Disk.walk(RawPath(home.path), into: &entries) { $0 == self.root }
        Disk.walk(git, into: &entries)
        Disk.walk(state, into: &entries)
        return entries
    }

    func takeBaseline() {
        baseline = guardedEntries()
        planted = Set(baseline.keys.filter { $0.starts(with: state) })
    }

    /// The agent's own entries of the state directory: its journal and its conflict copies, in
    /// the state directory itself (one reached through a link there is not its own).
    func isAgentsOwn(_ path: RawPath) -> Bool {
        guard !planted.contains(path), path.starts(with: state) else { return false }
        let inside = Array(path.bytes.dropFirst(state.bytes.count + 1))
        return inside.starts(with: Array("journal".utf8)) || inside.starts(with: Array("conflicts/".utf8))
            || inside == Array("conflicts".utf8) || inside.starts(with: Array("agent.sock".utf8))
            || inside.starts(with: Array("history.sqlite".utf8))
    }

    /// The state directory itself, or a name in it the agent keeps its own things under.
    func isAgentsName(_ path: RawPath) -> Bool {
        guard path != state else { return true }
        guard path.starts(with: state) else { return false }
        let inside = Array(path.bytes.dropFirst(state.bytes.count + 1))
        return ["journal", "conflicts", "agent.sock", "agent.lock", "history.sqlite"].contains { inside.starts(with: Array($0.utf8)) }
    }

    func place(of path: RawPath) -> String {
        if path.starts(with: git) { return "in .git/" }
        if path.starts(with: state) { return "in the state directory" }
        return "outside the root"
    }

    func shown(_ path: RawPath) -> String {
        RawPath(bytes: Array(path.bytes.dropFirst(home.path.utf8.count + 1))).description
    }

    /// Records a broken invariant once per scenario and `key` (the same leak seen again by each
    /// later step's read-back, or a journal outside growing at every step, is one finding).
    func violation(_ invariant: String, _ message: String, key: String? = nil) {
        guard reported.insert(invariant + ":" + (key ?? message)).inserted else { return }
        tally.violations[invariant, default: 0] += 1
        note("VIOLATION (\(invariant)) \(message)")
        findings.append("step \(stepIndex) [\(stepNote)]: (\(invariant)) \(message)")
        if isQuiet { return }
        recorded += 1
        guard recorded <= 12 else { return }
        Issue.record("\(label) — step \(stepIndex) [\(stepNote)]: (\(invariant)) \(message)")
    }

    // MARK: - The invariants

    func checkDisk() {
        let now = guardedEntries()
        for key in Set(baseline.keys).union(now.keys).sorted() {
            let before = baseline[key]
            let after = now[key]
            guard before != after else { continue }
            if isAgentsOwn(key) {
                checkAgentsOwn(key, before: before, after: after)
                continue
            }
            if isAgentsName(key), case .link = before,
                after == nil || after == .directory || { if case .file = after { true } else { false } }()
            {
                // A stranger's link where the agent keeps its own things (the state directory
                // itself, journal/, conflicts/…): the agent may take the name back; what the link
                // led to is judged where it is.
                continue
            }
            violation(
                "a",
                "\(shown(key)) \(place(of: key)) changed: was \(before.map(\.description) ?? "absent"), now \(after.map(\.description) ?? "absent")",
                key: "\(shown(key)) \(before == nil) \(after == nil)")
        }
        // Each change is reported once: the next steps are judged against what is there now.
        baseline = now
    }

    /// The agent's own files change only as the agent changes them: a journal keeps its header
    /// (a write through a link to it would replace it with a client's text), a conflict copy is
    /// written once and never changed or deleted.
    func checkAgentsOwn(_ key: RawPath, before: WallEntry?, after: WallEntry?) {
        guard case .file(let old) = before else { return }
        let inside = Array(key.bytes.dropFirst(state.bytes.count + 1))
        if inside.starts(with: Array("journal/".utf8)) {
            guard old.count >= 4 else { return }
            if case .file(let new) = after, new.starts(with: old.prefix(4)) { return }
            if after == nil { return }
            violation(
                "a", "the agent's journal \(shown(key)) was overwritten: was \(before!), now \(after!)",
                key: "journal \(shown(key))")
        } else if inside.starts(with: Array("conflicts/".utf8)), !Self.isTempName(key) {
            violation(
                "a",
                "the conflict copy \(shown(key)) changed: was \(before!), now \(after.map(\.description) ?? "absent")",
                key: "copy \(shown(key))")
        }
    }

    /// `.<name>.autosave-<random>.tmp`: a copy being written (one a crash interrupted is removed
    /// at the next start).
    static func isTempName(_ path: RawPath) -> Bool {
        let name = String(decoding: path.split.name, as: UTF8.self)
        return name.hasPrefix(".") && name.hasSuffix(".tmp") && name.contains(".autosave-")
    }

    /// A twin's file holds no token a request meant for its twin.
    func checkTwinsOnDisk() {
        for (path, twin) in twinOf {
            guard case .file(let bytes) = Disk.entry(path.text) else { continue }
            for token in Self.tokens(in: bytes) where ownerOf[token] == twin {
                violation("c", "\(shown(path)) holds \(token), which was meant for its twin \(shown(twin))")
            }
        }
    }

    static func tokens(in bytes: [UInt8]) -> [String] {
        let text = String(decoding: bytes, as: UTF8.self)
        return text.split(whereSeparator: { !($0.isLetter || $0.isNumber || $0 == "-") }).map(String.init)
    }

    /// The answers a step got, and every open buffer read back: no sentinel the request did not
    /// send, and no twin's bytes for the other twin.
    func checkAnswers(_ answers: [(path: String?, bytes: [UInt8])], sent: Set<String>) {
        for (path, bytes) in answers {
            let text = String(decoding: bytes, as: UTF8.self)
            for mark in Self.sentinelMarks where text.contains(mark) {
                let leaked = Self.tokens(in: bytes).filter { $0.hasPrefix(mark) && !sent.contains($0) }
                guard !leaked.isEmpty else { continue }
                let source =
                    mark.hasPrefix("OUTSIDE")
                    ? "a file outside the root"
                    : mark.hasPrefix("GIT") ? "a file in .git/" : "a file in the state directory"
                violation(
                    "b",
                    "the answer for \(path.map { RawPath($0).description } ?? "the request") carried \(leaked.joined(separator: ", ")) from \(source): \(text.prefix(120).debugDescription)"
                )
            }
            guard let path, let target = resolve(path), let twin = twinOf[target] else { continue }
            let foreign = Self.tokens(in: bytes).filter { ownerOf[$0] == twin }
            if !foreign.isEmpty {
                violation(
                    "c",
                    "a read of \(RawPath(path)) (the file \(shown(target))) answered \(foreign.joined(separator: ", ")), the bytes of its twin \(shown(twin))"
                )
            }
        }
    }

    func checkWalls(answers: [(path: String?, bytes: [UInt8])], sent: Set<String>) async {
        if harness != nil {
            await harness.catchUp()
            try? await harness.waitForQuietBuffers()
        }
        checkDisk()
        checkTwinsOnDisk()
        var all = answers
        // Every open buffer, read back as a client would.
        for status in await harness.workspace.status() {
            do {
                let (content, _) = try await harness.workspace.read(status.path)
                all.append((status.path, content ?? []))
            } catch {
                all.append((status.path, Array(String(describing: error).utf8)))
            }
        }
        checkAnswers(all, sent: sent)
    }

    /// The absolute file the kernel would open for `path` as a client names it.
    func resolve(_ path: String) -> RawPath? {
        Disk.kernelTarget(path.utf8.first == UInt8(ascii: "/") ? RawPath(path) : root.appending(path))
    }

    // MARK: - Steps

    /// A path from the pool, maybe in another form (absolute, `./`).
    func pick(_ r: inout SplitMix64) -> String {
        let path = pool[r.below(pool.count)]
        switch r.below(6) {
        case 0 where path.utf8.first != UInt8(ascii: "/"): return root.text + "/" + path
        case 1 where path.utf8.first != UInt8(ascii: "/"): return "./" + path
        default: return path
        }
    }

    /// What a request for `path` is, for the tallies: through a link, or to a twin.
    func count(_ path: String) {
        if let target = resolve(path), twinOf[target] != nil { tally.twinRequests += 1 }
        var current = path.utf8.first == UInt8(ascii: "/") ? RawPath(bytes: []) : root
        for part in path.utf8.split(separator: UInt8(ascii: "/")) {
            current = RawPath(bytes: current.bytes + [UInt8(ascii: "/")] + part)
            if Disk.isLink(current.text) {
                tally.linkRequests += 1
                return
            }
        }
    }

    /// A token for a client's write to `path`, owned by the twin file it is meant for.
    func clientToken(for path: String) -> String {
        let text = token("CLIENT")
        if let target = resolve(path), twinOf[target] != nil { ownerOf[text] = target }
        return text
    }

    /// The first line of what the kernel reads at `path` (what a model would put in a patch).
    func firstLine(_ path: String) -> String? {
        guard let target = resolve(path), case .file(let bytes) = Disk.entry(target.text) else { return nil }
        return String(decoding: bytes.prefix { $0 != UInt8(ascii: "\n") }, as: UTF8.self)
    }

    static func header(_ path: String, _ prefix: String) -> String {
        path.utf8.first == UInt8(ascii: "/") ? path : prefix + path
    }

    typealias Answer = (path: String?, bytes: [UInt8])

    func perform(_ code: Int) async -> ([Answer], Set<String>) {
        var r = splitMix(code)
        let workspace = harness.workspace
        var answers: [Answer] = []
        var sent: Set<String> = []
        let path = pick(&r)
        count(path)
        /// Runs a request, counting its acceptance or the kind of its refusal; a refusal's text is an answer too.
        func request(_ what: String, _ body: () async throws -> Void) async {
            stepNote = what
            note("step \(stepIndex): \(what)")
            do {
                try await body()
                tally.accepted += 1
                note("  accepted")
            } catch {
                // The error's case, never its wording (which will change).
                let kind = "\(type(of: error)).\(Mirror(reflecting: error).children.first?.label ?? "\(error)")"
                tally.refused[kind, default: 0] += 1
                answers.append((nil, Array(String(describing: error).utf8)))
                note("  refused: \(error)")
            }
        }
        switch code % 21 {
        case 0:
            await request("read \(RawPath(path))") {
                let (content, _) = try await workspace.read(path)
                answers.append((path, content ?? []))
            }
        case 1:
            await request("readText \(RawPath(path))") {
                let (text, _) = try await workspace.readText(path)
                answers.append((path, text?.bytes ?? []))
            }
        case 2:
            await request("open \(RawPath(path))") { _ = try await workspace.open(path) }
        case 3, 4:
            let text = clientToken(for: path)
            let parents = r.below(2) == 0
            await request("write \(text) to \(RawPath(path))\(parents ? " createParents" : "")") {
                if code % 20 == 3 {
                    _ = try await workspace.write(path, Array((text + "\n").utf8), createParents: parents)
                } else {
                    try await workspace.accept(path, Array((text + "\n").utf8), createParents: parents)
                        .waitUntilDurable()
                }
            }
        case 5:
            let text = clientToken(for: path)
            let edit = TextEdit(
                range: TextRange(start: TextPosition(line: 0, character: 0), end: TextPosition(line: 0, character: 0)),
                text: Array((text + "\n").utf8))
            await request("edit: insert \(text) at 0:0 of \(RawPath(path))") {
                try await workspace.acceptEdits(path, [edit], encoding: .utf8).waitUntilDurable()
            }
        case 6:
            // A patch replacing the first line the model saw (through the kernel) at that path.
            let old = firstLine(path) ?? "INSIDE-0"
            let text = clientToken(for: path)
            sent.formUnion(Self.tokens(in: Array(old.utf8)))
            let patch =
                "--- \(Self.header(path, "a/"))\n+++ \(Self.header(path, "b/"))\n@@ -1 +1 @@\n-\(old)\n+\(text)\n"
            await request("patch \(RawPath(path)): -\(old) +\(text)") { answers += try await self.patch(patch) }
        case 7:
            let text = clientToken(for: path)
            let patch = "--- /dev/null\n+++ \(Self.header(path, "b/"))\n@@ -0,0 +1 @@\n+\(text)\n"
            await request("patch creating \(RawPath(path)) with \(text)") { answers += try await self.patch(patch) }
        case 8:
            let old = firstLine(path) ?? "INSIDE-0"
            sent.formUnion(Self.tokens(in: Array(old.utf8)))
            let patch = "--- \(Self.header(path, "a/"))\n+++ /dev/null\n@@ -1 +0,0 @@\n-\(old)\n"
            await request("patch deleting \(RawPath(path)) (-\(old))") { answers += try await self.patch(patch) }
        case 9:
            // Two files in one patch, or a patch whose headers name two spellings of one name.
            let other = pick(&r)
            count(other)
            let text = clientToken(for: path)
            let second = clientToken(for: other)
            let twins = twinOf.keys.sorted()
            if r.below(2) == 0, let from = twins.isEmpty ? nil : twins[r.below(twins.count)], let to = twinOf[from] {
                let fromName = String(decoding: from.bytes.dropFirst(root.bytes.count + 1), as: UTF8.self)
                let toName = String(decoding: to.bytes.dropFirst(root.bytes.count + 1), as: UTF8.self)
                let old = firstLine(fromName) ?? "TWIN-0"
                sent.formUnion(Self.tokens(in: Array(old.utf8)))
                let owned = clientToken(for: toName)
                tally.twinRequests += 1
                let patch = "--- a/\(fromName)\n+++ b/\(toName)\n@@ -1 +1 @@\n-\(old)\n+\(owned)\n"
                await request("patch from \(RawPath(fromName)) to its twin \(RawPath(toName))") {
                    answers += try await self.patch(patch)
                }
            } else {
                let old = firstLine(path) ?? "INSIDE-0"
                sent.formUnion(Self.tokens(in: Array(old.utf8)))
                let patch =
                    "--- \(Self.header(path, "a/"))\n+++ \(Self.header(path, "b/"))\n@@ -1 +1 @@\n-\(old)\n+\(text)\n"
                    + "--- /dev/null\n+++ \(Self.header(other, "b/"))\n@@ -0,0 +1 @@\n+\(second)\n"
                await request("patch \(RawPath(path)) and create \(RawPath(other))") {
                    answers += try await self.patch(patch)
                }
            }
        case 10:
            await request("remove \(RawPath(path))") { _ = try await workspace.remove(path) }
        case 11:
            if r.below(3) == 0 {
                await request("saveAll") { try await workspace.saveAll() }
            } else {
                // Often a buffer that is open: a save of one that is not is refused.
                let open = await workspace.status().map(\.path)
                let target = !open.isEmpty && r.below(2) == 0 ? open[r.below(open.count)] : path
                await request("save \(RawPath(target))") { try await workspace.save([target]) }
            }
        case 12:
            let open = await workspace.status().map(\.path)
            let target = !open.isEmpty && r.below(2) == 0 ? open[r.below(open.count)] : path
            await request("close \(RawPath(target))") { try await workspace.close(target) }
        case 13:
            await request("status") {
                for status in await workspace.status() { answers.append((nil, Array("\(status)".utf8))) }
            }
        case 14, 15:
            await swap(&r)
        case 16:
            await externalEdit(&r)
        case 17:
            stepNote = "time passes the autosave window"
            note("step \(stepIndex): \(stepNote)")
            try? await harness.advance(by: harness.delay)
        case 18:
            stepNote = "settle external changes"
            note("step \(stepIndex): \(stepNote)")
            await harness.settleExternalChanges()
        case 20:
            await crashAndRestart(&r)
        default:
            await twinDance(&r, answers: &answers)
        }
        return (answers, sent)
    }

    /// The agent stops as after `kill -9` (unsaved edits only in the journal), maybe a swap is made
    /// while it is down (a checkout), and a new one starts: recovery reopens and saves every path
    /// the journal names.
    func crashAndRestart(_ r: inout SplitMix64) async {
        stepNote = "kill -9 and restart"
        note("step \(stepIndex): \(stepNote)")
        countConflictCopies()
        await harness.workspace._abandon()
        if r.below(2) == 0 { await swap(&r, settling: false) }
        stepNote = "kill -9, \(stepNote == "kill -9 and restart" ? "" : stepNote + ", ")restart (recovery)"
        do {
            harness = try await Self.startHarness(root: root, state: state)
            tally.restarts += 1
        } catch {
            // A start the agent refuses (a hostile state directory, say) writes nothing: the checks say.
            note("  the restart was refused: \(error)")
            tally.refusedStarts += 1
            harness = nil
        }
    }

    static func startHarness(root: RawPath, state: RawPath) async throws -> WorkspaceHarness {
        try await WorkspaceHarness(root: root.text, stateDirectory: state.text) {
            // Saves happen when time moves past this window (a step), when asked, or at the end.
            $0.autosave.delayMs = 4_000
            $0.autosave.maxDelayMs = 30_000
        }
    }

    /// Conflict copies the agent says it made (to show the generator reaches them).
    func countConflictCopies() {
        tally.conflictCopies +=
            harness.logs.elements.filter {
                $0.event == "conflict" && $0.fields["copy"] != nil && $0.fields["copy"] != "nil"
            }.count
    }

    func patch(_ text: String) async throws -> [Answer] {
        let files = try await harness.workspace.applyPatch(Array(text.utf8))
        return files.map { (nil, Array("\($0.path) \($0.revision)".utf8)) }
    }

    /// One twin opened, read or written, then the other spelling of it.
    func twinDance(_ r: inout SplitMix64, answers: inout [Answer]) async {
        let twins = twinOf.keys.sorted()
        guard !twins.isEmpty else {
            stepNote = "no twins in this tree"
            return
        }
        let first = twins[r.below(twins.count)]
        let second = twinOf[first]!
        let workspace = harness.workspace
        for (index, twin) in [first, second].enumerated() {
            let name = String(decoding: twin.bytes.dropFirst(root.bytes.count + 1), as: UTF8.self)
            tally.twinRequests += 1
            let action = r.below(3)
            stepNote =
                "twins: \(["open", "read", "write"][action]) \(RawPath(name)) (\(index == 0 ? "first" : "then its twin"))"
            note("step \(stepIndex): \(stepNote)")
            do {
                switch action {
                case 0: _ = try await workspace.open(name)
                case 1:
                    let (content, _) = try await workspace.read(name)
                    answers.append((name, content ?? []))
                default:
                    let text = clientToken(for: name)
                    _ = try await workspace.write(name, Array((text + "\n").utf8), createParents: true)
                }
                tally.accepted += 1
            } catch {
                answers.append((nil, Array(String(describing: error).utf8)))
                note("  refused: \(error)")
            }
        }
    }

    /// A tool edits a file inside the root (a real file, never through a link): the buffers merge it.
    func externalEdit(_ r: inout SplitMix64) async {
        let candidates = insideFiles.filter { Disk.isFile(root.appending($0).text) }
        guard !candidates.isEmpty else { return }
        let name = candidates[r.below(candidates.count)]
        let text = token("EXT")
        let target = root.appending(name)
        if twinOf[target] != nil { ownerOf[text] = target }
        stepNote = "a tool writes \(text) to \(RawPath(name))"
        note("step \(stepIndex): \(stepNote)")
        if r.below(2) == 0 {
            Disk.write(target.text, text + "\n")
        } else {
            let temp = target.split.parent.appending(".walls-edit.tmp~")
            Disk.write(temp.text, text + "\n")
            rename(temp.text, target.text)
        }
        await harness.settleExternalChanges()
    }

    /// A swap between requests, as `git checkout`, `ln -sfn` or a hostile tool makes it.
    func swap(_ r: inout SplitMix64, settling: Bool = true) async {
        counter += 1
        let variant = r.below(6)
        let absolute = r.below(2) == 0
        let open = await harness.workspace.status().map(\.path)
        switch variant {
        case 0, 1:
            // A file (one open in a buffer, when there is one) replaced by a link, by a rename over it.
            let files = insideFiles.filter { Disk.isFile(root.appending($0).text) }
            let preferred = files.filter { file in open.contains { RawPath($0) == RawPath(file) } }
            let choices = preferred.isEmpty || r.below(4) == 0 ? files : preferred
            guard !choices.isEmpty else { return }
            let name = choices[r.below(choices.count)]
            let target = fileTargets[r.below(fileTargets.count)]
            let temp = "\(name).swap\(counter)"
            guard Disk.isDirectory(root.appending(name).split.parent.text) else { return }
            makeLink(temp, to: target, absolute: absolute)
            links.removeAll { $0 == temp }
            rename(root.appending(temp).text, root.appending(name).text)
            if !links.contains(name) { links.append(name) }
            stepNote = "swap: \(RawPath(name)) replaced by a link to \(shown(target))"
        case 2:
            // A folder replaced by a link (as a checkout of a branch where it is one).
            let folders = ["d/e", "d", "na\u{EF}ve", "nai\u{308}ve"].filter {
                Disk.isDirectory(root.appending($0).text)
            }
            guard !folders.isEmpty else { return }
            let name = folders[r.below(folders.count)]
            let target = folderTargets[r.below(folderTargets.count)]
            rename(root.appending(name).text, root.appending(name + ".moved\(counter)").text)
            makeLink(name, to: target, absolute: absolute)
            stepNote = "swap: folder \(RawPath(name)) replaced by a link to \(shown(target))"
        case 3:
            // A link retargeted (ln -sfn: a new link renamed over it).
            let current = links.filter { Disk.isLink(root.appending($0).text) }
            guard !current.isEmpty else { return }
            let name = current[r.below(current.count)]
            let all = fileTargets + folderTargets
            let target = all[r.below(all.count)]
            let temp = "\(name).swap\(counter)"
            makeLink(temp, to: target, absolute: absolute)
            links.removeAll { $0 == temp }
            rename(root.appending(temp).text, root.appending(name).text)
            stepNote = "swap: link \(RawPath(name)) retargeted to \(shown(target))"
        case 4:
            // A link renamed over a file.
            let current = links.filter { Disk.isLink(root.appending($0).text) }
            let files = insideFiles.filter { Disk.isFile(root.appending($0).text) }
            guard !current.isEmpty, !files.isEmpty else { return }
            let link = current[r.below(current.count)]
            let file = files[r.below(files.count)]
            rename(root.appending(link).text, root.appending(file).text)
            links.removeAll { $0 == link }
            if !links.contains(file) { links.append(file) }
            stepNote = "swap: link \(RawPath(link)) renamed over \(RawPath(file))"
        default:
            // A state-directory folder replaced by a link, while the agent runs.
            guard Disk.isDirectory(state.text) else { return }
            Disk.makeFolders(state.appending("conflicts").text)
            let names = ["conflicts/d", "conflicts/na\u{EF}ve", "conflicts/d/e"]
            let name = names[r.below(names.count)]
            let at = state.appending(name)
            guard Disk.isDirectory(at.split.parent.text) else { return }
            let target = r.below(2) == 0 ? outside.appending("dir/sub") : git.appending("objects")
            if Disk.entry(at.text) != nil { rename(at.text, at.text + ".moved\(counter)") }
            symlink(absolute ? target.text : Disk.relative(from: at.split.parent, to: target), at.text)
            stepNote = "swap: state directory's \(name) replaced by a link to \(shown(target))"
        }
        tally.swaps += 1
        note("step \(stepIndex): \(stepNote)")
        // What the swap itself did to the guarded places is the test's doing, not the agent's.
        let now = guardedEntries()
        for key in Set(baseline.keys).union(now.keys) where baseline[key] != now[key] && !isAgentsOwn(key) {
            if key.starts(with: state), now[key] != nil { planted.insert(key) }
        }
        baseline = now
        if settling { await harness.settleExternalChanges() }
    }
}

/// The generator a step's or a tree's code seeds (`SplitMix64`, its seed spread as before, so
/// the known holes' codes still name the same choices).
func splitMix(_ code: Int) -> SplitMix64 {
    SplitMix64(seed: UInt64(truncatingIfNeeded: code) &* 0x9E37_79B9_7F4A_7C15 &+ 0x1234_5678)
}
