import AutosaveKit
import Foundation
import Testing

/// docs/architecture.md draws the buffer's life ("The buffer's life"): a table of every
/// transition of `BufferStateMachine` (`| from | event | to | actions |`) and a mermaid diagram
/// of the same rows. Both are checked against the machine itself, explored breadth-first from a
/// fresh machine with every event a correct driver can send (the legality rules of
/// `FuzzBufferStateMachine`, which checks the machine's promises on random sequences), each with
/// the parameters that change what it does. A row missing or extra, an answer missing or extra in
/// a row's actions, or a diagram that does not match, fails and prints the rows as they should be.
@Suite struct BufferLifecycleDiagramTests {
    typealias Machine = BufferStateMachine<Int>

    static let document = "docs/architecture.md"
    static let section = "## The buffer's life"
    /// The states in the order the table lists them.
    static let states = ["unread", "reading", "clean", "dirty", "displaced", "closed"]
    /// The events in the order the table lists them: the machine's method names.
    static let events = [
        "loadRequested", "waitForLoad", "loaded", "loadFailed", "contentChanged", "saveRequested", "waitForSave",
        "saveFinished", "diskChanged", "reconcileFinished", "waitUntilReconciled", "keptAside", "replaced",
        "replacedCopyFinished", "closeRequested", "removedWhileClean", "abandoned",
    ]
    /// What the actions column may name besides an answer's case (`.read`, `.start`, …).
    static let flags: Set<String> = ["waiters", "mustReconcile", "mustRearm", "isFirstWaitForWriter"]

    struct Transition: Hashable, Comparable, CustomStringConvertible {
        var from: String
        var event: String
        var to: String

        static func < (a: Self, b: Self) -> Bool {
            func order(_ t: Self) -> [Int] {
                [states.firstIndex(of: t.from) ?? 99, events.firstIndex(of: t.event) ?? 99, states.firstIndex(of: t.to) ?? 99]
            }
            return order(a).lexicographicallyPrecedes(order(b))
        }

        var description: String { "\(from) --\(event)--> \(to)" }
    }

    // MARK: - The checks

    @Test func theTableHasEveryTransitionOfTheMachineAndNoOther() throws {
        let explored = Self.explore()
        let documented = try Self.documentedRows()
        #expect(explored.count > 40, "the exploration found the machine's transitions (\(explored.count))")
        let missing = Set(explored.keys).subtracting(documented.keys).sorted()
        let extra = Set(documented.keys).subtracting(explored.keys).sorted()
        if !missing.isEmpty {
            let rows = missing.map { Self.row($0, explored[$0]!) }.joined(separator: "\n")
            Issue.record("\(Self.document) lacks \(missing.count) transition(s) the machine makes; add these rows:\n\(rows)")
        }
        if !extra.isEmpty {
            let rows = extra.map { Self.row($0, documented[$0]!) }.joined(separator: "\n")
            Issue.record("\(Self.document) has \(extra.count) row(s) the machine never makes (or only after an event no correct driver sends):\n\(rows)")
        }
        if !missing.isEmpty || !extra.isEmpty {
            print("The table as the machine makes it:\n" + Self.table(explored))
        }
    }

    @Test func eachRowsActionsAreTheAnswersTheMachineGivesThere() throws {
        let explored = Self.explore()
        let documented = try Self.documentedRows()
        for (transition, answers) in explored.sorted(by: { $0.key < $1.key }) {
            guard let written = documented[transition] else { continue }  // reported by the test above
            let missing = answers.subtracting(written).sorted()
            let extra = written.subtracting(answers).sorted()
            #expect(
                missing.isEmpty && extra.isEmpty,
                "\(Self.document), row \(transition): actions lack \(missing), name \(extra) the machine never answers there; the row should be:\n\(Self.row(transition, answers))"
            )
        }
    }

    @Test func theDiagramIsDrawnFromTheTable() throws {
        let text = try Self.sectionText()
        let blocks = text.components(separatedBy: "```mermaid\n").dropFirst()
        let block = try #require(blocks.first?.components(separatedBy: "```").first, "\(Self.document)'s section has no ```mermaid block")
        let expected = Self.mermaid(Set(Self.explore().keys))
        let lines = { (text: String) in text.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty } }
        #expect(lines(block) == lines(expected), "\(Self.document)'s mermaid block is not the table's rows; it should be:\n```mermaid\n\(expected)```")
    }

    // MARK: - The document

    static func sectionText() throws -> String {
        let text = try DocumentationTests.text(document)
        let parts = text.components(separatedBy: "\n\(section)\n")
        try #require(parts.count == 2, "\(document) has no (or more than one) section \"\(section)\"")
        return parts[1].components(separatedBy: "\n## ").first!
    }

    /// The table's rows: each transition and the answers its actions name.
    static func documentedRows() throws -> [Transition: Set<String>] {
        let rows = DocumentationTests.tableRows(try sectionText())
        let header = try #require(rows.first, "\(document)'s section \"\(section)\" has no table")
        try #require(header.prefix(4) == ["from", "event", "to", "actions"], "the table's columns are \(header), not from, event, to, actions")
        var documented: [Transition: Set<String>] = [:]
        for row in rows.dropFirst() where row.count >= 4 {
            let name = { (cell: String) in DocumentationTests.codeNames(in: cell).first ?? cell }
            let transition = Transition(from: name(row[0]), event: name(row[1]), to: name(row[2]))
            #expect(documented[transition] == nil, "\(document) lists \(transition) twice")
            documented[transition] = Set(DocumentationTests.codeNames(in: row[3]).filter { $0.hasPrefix(".") || flags.contains($0) })
        }
        return documented
    }

    static func row(_ transition: Transition, _ answers: Set<String>) -> String {
        let actions = answers.isEmpty ? "—" : answers.sorted().map { "`\($0)`" }.joined(separator: ", ")
        return "| `\(transition.from)` | `\(transition.event)` | `\(transition.to)` | \(actions) |"
    }

    static func table(_ transitions: [Transition: Set<String>]) -> String {
        (["| from | event | to | actions |", "|---|---|---|---|"] + transitions.keys.sorted().map { row($0, transitions[$0]!) })
            .joined(separator: "\n")
    }

    /// The diagram of `transitions`: one arrow per pair of different states, labelled with the
    /// events that take it (a row that stays in its state is in the table only).
    static func mermaid(_ transitions: Set<Transition>) -> String {
        var lines = ["stateDiagram-v2", "    [*] --> unread"]
        let moves = transitions.filter { $0.from != $0.to }.sorted()
        var pairs: [(from: String, to: String)] = []
        for move in moves where !pairs.contains(where: { $0 == (move.from, move.to) }) { pairs.append((move.from, move.to)) }
        pairs.sort { (states.firstIndex(of: $0.from)!, states.firstIndex(of: $0.to)!) < (states.firstIndex(of: $1.from)!, states.firstIndex(of: $1.to)!) }
        for pair in pairs {
            let names = moves.filter { $0.from == pair.from && $0.to == pair.to }.map(\.event)
            lines.append("    \(pair.from) --> \(pair.to): \(names.joined(separator: ", "))")
        }
        lines.append("    closed --> [*]")
        return lines.joined(separator: "\n") + "\n"
    }

    // MARK: - Exploring the machine

    /// What a correct driver knows besides the machine: what it started and has not heard back
    /// from, and its text.
    struct Driver {
        var isLoadInFlight = false
        var saveInFlight: Int?
        var reconcilesInFlight = 0
        var isDirty = false
        var isPendingDelete = false
        /// Conflict copies of a displaced buffer being written: the revisions they hold.
        var replacedCopies: [Int] = []
        var nextWaiter = 0
    }

    struct Node {
        var machine = Machine(reportIllegal: { Issue.record("illegal event: \($0)") })
        var driver = Driver()
        /// The transitions the step that made this node took, and the answers they gave.
        var taken: [(Transition, Set<String>)] = []

        var state: String { Machine.name(of: machine.state) }
        var isOpen: Bool { machine.isOpen }

        /// Sends one event, noting its transition and the answer's names.
        mutating func send<T>(_ event: String, _ answer: (T) -> Set<String>, _ call: (inout Machine) -> T) -> T {
            let from = state
            let result = call(&machine)
            taken.append((Transition(from: from, event: event, to: state), answer(result)))
            return result
        }

        mutating func fresh() -> Int {
            driver.nextWaiter += 1
            return driver.nextWaiter
        }

        /// What decides the machine's and the driver's next steps, with counts capped: two nodes
        /// with the same key have the same transitions ahead.
        var key: String {
            var parts = [state, "\(driver.isLoadInFlight)", "\(driver.reconcilesInFlight)", "\(driver.isDirty)", "\(driver.isPendingDelete)"]
            parts.append(driver.saveInFlight.map { $0 == machine.revision ? "save=" : "save<" } ?? "-")
            parts.append(driver.replacedCopies.map { $0 == machine.revision ? "=" : "<" }.sorted().joined())
            switch machine.state {
            case .reading(let waiters, let activity):
                parts += ["\(waiters.isEmpty)", "\(activity.reconcilesInFlight)", "\(activity.reconcileWaiters.isEmpty)"]
            case .clean(let activity), .dirty(let activity), .displaced(let activity):
                if case .saving(_, let changed, let waiters) = activity.save { parts.append("saving \(changed) \(waiters.isEmpty)") }
                parts += [
                    "\(activity.reconcilesInFlight)", "\(activity.reconcileWaiters.isEmpty)", "\(activity.isSaveDueAfterReconcile)",
                    "\(activity.isWaitingForWriter)",
                ]
            case .closed(let closing): parts.append(closing.rawValue)
            case .unread: break
            }
            return parts.joined(separator: "/")
        }

        /// Every node one step (one event, with what the driver does in the same turn) away.
        func successors() -> [Node] {
            var next: [Node] = []
            func step(_ body: (inout Node) -> Void) {
                var node = self
                node.taken = []
                body(&node)
                next.append(node)
            }
            let waiters: ([Int]) -> Set<String> = { $0.isEmpty ? [] : ["waiters"] }
            let wait: (Machine.WaitAction) -> Set<String> = { [".\($0)"] }

            step { node in
                let action = node.send("loadRequested", { [".\($0)"] }) { $0.loadRequested() }
                if action == .read { node.driver.isLoadInFlight = true }
                if action == .wait {
                    let waiter = node.fresh()
                    _ = node.send("waitForLoad", wait) { $0.waitForLoad(waiter) }
                }
            }
            step { node in
                let waiter = node.fresh()
                _ = node.send("waitForLoad", wait) { $0.waitForLoad(waiter) }
            }
            // A read ends (also after the buffer closed): read, or failed.
            if driver.isLoadInFlight {
                for isDirty in [false, true] {
                    step { node in
                        node.driver.isLoadInFlight = false
                        let revision = node.machine.revision + 1
                        let (_, mustReconcile) = node.send("loaded", { (answer: (waiters: [Int], mustReconcile: Bool)) in
                            waiters(answer.waiters).union(answer.mustReconcile ? ["mustReconcile"] : [])
                        }) { $0.loaded(revision: revision, isDirty: isDirty) }
                        (node.driver.isDirty, node.driver.isPendingDelete) = (isDirty, false)
                        // In the same turn: the look at the disk the read may have missed.
                        if mustReconcile { node.driver.reconcilesInFlight += 1 }
                    }
                }
                step { node in
                    node.driver.isLoadInFlight = false
                    _ = node.send("loadFailed", waiters) { $0.loadFailed() }
                }
            }
            // An edit, a reload, a merge once open; while reading, the read's own text.
            if isOpen || state == "reading" {
                for (isDirty, isDelete) in isOpen ? [(false, false), (true, false), (true, true)] : [(false, false)] {
                    step { node in
                        let revision = node.machine.revision + 1
                        node.send("contentChanged", { _ in [] }) { $0.contentChanged(revision: revision, isDirty: isDirty) }
                        (node.driver.isDirty, node.driver.isPendingDelete) = (isDirty, isDelete)
                    }
                }
            }
            step { node in
                let action = node.send("saveRequested", { (action: Machine.SaveAction) in
                    if case .start = action { return [".start"] }
                    return [".\(action)"]
                }) { $0.saveRequested() }
                switch action {
                case .start(let revision): node.driver.saveInFlight = revision
                case .copyAside where node.driver.replacedCopies.count < 2: node.driver.replacedCopies.append(node.machine.revision)
                default: break
                }
            }
            step { node in
                let waiter = node.fresh()
                _ = node.send("waitForSave", wait) { $0.waitForSave(waiter) }
            }
            if let started = driver.saveInFlight {
                let outcomes: [Machine.SaveOutcome] = [.saved(revision: started), .heldOpen, .changedOnDisk, .failed]
                for outcome in outcomes {
                    // Edited during the save: dirty after it, or taken back to what it wrote.
                    for isDirtyAfter in outcome == .saved(revision: started) && started != machine.revision ? [false, true] : [false] {
                        step { node in
                            // Also after the buffer closed.
                            node.driver.saveInFlight = nil
                            let wasOpen = node.isOpen
                            let finished = node.send("saveFinished", { (finished: Machine.SaveFinished) in
                                var names = waiters(finished.waiters)
                                if finished.mustReconcile { names.insert("mustReconcile") }
                                if finished.isFirstWaitForWriter { names.insert("isFirstWaitForWriter") }
                                return names
                            }) { $0.saveFinished(outcome) }
                            // In the same turn: the save's new base, then the look at the disk it asked for.
                            if case .saved = outcome, wasOpen {
                                let revision = node.machine.revision
                                node.send("contentChanged", { _ in [] }) { $0.contentChanged(revision: revision, isDirty: isDirtyAfter) }
                                node.driver.isDirty = isDirtyAfter
                                node.driver.isPendingDelete = node.driver.isPendingDelete && isDirtyAfter
                            }
                            // The machine counts that look as under way: the driver reads the disk
                            // and reports reconcileFinished.
                            if finished.mustReconcile { node.driver.reconcilesInFlight += 1 }
                        }
                    }
                }
            }
            if driver.reconcilesInFlight < 2 {
                step { node in
                    let action = node.send("diskChanged", { [".\($0)"] }) { $0.diskChanged() }
                    if action == .read { node.driver.reconcilesInFlight += 1 }
                }
            }
            if driver.reconcilesInFlight > 0 {
                step { node in
                    node.driver.reconcilesInFlight -= 1
                    _ = node.send("reconcileFinished", { (finished: Machine.ReconcileFinished) in
                        var names = waiters(finished.waiters)
                        if finished.mustRearm { names.insert("mustRearm") }
                        return names
                    }) { $0.reconcileFinished() }
                }
            }
            step { node in
                let waiter = node.fresh()
                _ = node.send("waitUntilReconciled", wait) { $0.waitUntilReconciled(waiter) }
            }
            if isOpen {
                // A reconcile's conflict copy of the buffer's text.
                step { node in
                    let revision = node.machine.revision
                    node.send("keptAside", { _ in [] }) { $0.keptAside(revision: revision) }
                }
            }
            step { node in
                let hasEditsToKeep = node.isOpen && node.driver.isDirty && !node.driver.isPendingDelete
                let (action, _) = node.send("replaced", { (answer: (action: Machine.ReplacedAction, waiters: [Int])) in
                    waiters(answer.waiters).union([".\(answer.action)"])
                }) { $0.replaced(hasEditsToKeep: hasEditsToKeep) }
                if action == .copyAside, node.driver.replacedCopies.count < 2 { node.driver.replacedCopies.append(node.machine.revision) }
            }
            for index in driver.replacedCopies.indices {
                for isWritten in [false, true] {
                    step { node in
                        let revision = node.driver.replacedCopies.remove(at: index)
                        let copied = isWritten ? revision : nil
                        if node.state == "dirty" {
                            // Taken back and edited again while the copy was written: the machine
                            // refuses `replacedCopyFinished` there; the driver reports a conflict copy.
                            if let copied { node.send("keptAside", { _ in [] }) { $0.keptAside(revision: copied) } }
                            return
                        }
                        _ = node.send("replacedCopyFinished", { waiters($0.waiters) }) { $0.replacedCopyFinished(copied: copied) }
                    }
                }
            }
            step { node in
                _ = node.send("closeRequested", { (answer: (action: Machine.CloseAction, waiters: [Int])) in
                    waiters(answer.waiters).union([".\(answer.action)"])
                }) { $0.closeRequested() }
            }
            if state == "clean" {
                step { node in _ = node.send("removedWhileClean", waiters) { $0.removedWhileClean() } }
            }
            step { node in _ = node.send("abandoned", waiters) { $0.abandoned() } }
            return next
        }
    }

    /// Every transition a correct driver can take the machine through, with the answers it gives
    /// there: breadth-first from a fresh machine until no new (capped) state is found.
    static func explore() -> [Transition: Set<String>] {
        var transitions: [Transition: Set<String>] = [:]
        var seen: Set<String> = []
        var queue = [Node()]
        seen.insert(queue[0].key)
        var index = 0
        while index < queue.count {
            let node = queue[index]
            index += 1
            for next in node.successors() {
                for (transition, answers) in next.taken { transitions[transition, default: []].formUnion(answers) }
                if seen.insert(next.key).inserted { queue.append(next) }
            }
            if queue.count > 500_000 {
                Issue.record("the exploration passed 500,000 states: a count the key does not cap?")
                break
            }
        }
        return transitions
    }
}
