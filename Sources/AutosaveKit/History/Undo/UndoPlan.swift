import AutosaveHistory

/// What undoing one writer's changes to one file comes to, worked out from the file's history
/// and its content now, before anything is written.
///
/// Each of the writer's versions in the window is taken back newest first, as `git revert`
/// does: the change from the version before it to it is reversed by a three-way merge onto the
/// text (base: the writer's version, ours: the text so far, theirs: the version before), so what
/// others wrote since stays. A file the writer created is removed if nobody changed it since; a
/// file the writer removed comes back with what it held, if nothing took its place. When a
/// reversal overlaps someone's later edit, nothing of the file is changed: the outcome is a
/// collision, with the file as it was before the writer's first change in the window for the
/// user to merge by hand.
public struct UndoPlan: Sendable, Equatable {
    /// What to do with the file.
    public enum Outcome: Sendable, Equatable {
        /// Nothing of the writer's to take back (or it was taken back already).
        case unchanged
        /// The file's new content.
        case write([UInt8])
        /// Remove the file (the writer made it, and nobody changed it since).
        case remove
        /// A reversal overlaps a later edit: leave the file as it is. `undone` is the file as it
        /// was before the writer's first change in the window (nil: it did not exist).
        case collision(undone: [UInt8]?)
    }

    /// One version of the file, with its bytes (nil for a removal: no file).
    public struct Entry: Sendable, Equatable {
        public var version: Version
        public var content: [UInt8]?

        public init(version: Version, content: [UInt8]?) {
            self.version = version
            self.content = content
        }
    }

    public var outcome: Outcome
    /// The writer's versions taken back, newest first.
    public var undone: [Int64] = []
    /// Where the file goes back to: the writer moved it here from there, and nobody changed it
    /// since. The outcome's content is then for that name, and the file at this one goes.
    public var movesBackTo: String?
    /// The writer's versions left alone, and why (a move of a file changed since, a save shared
    /// with other writers, a change history has no version before).
    public var skipped: [(id: Int64, reason: String)] = []

    public static func == (lhs: UndoPlan, rhs: UndoPlan) -> Bool {
        lhs.outcome == rhs.outcome && lhs.undone == rhs.undone && lhs.skipped.map(\.id) == rhs.skipped.map(\.id)
            && lhs.movesBackTo == rhs.movesBackTo
    }

    /// The kinds that are a writer's change of the file (a baseline or a conflict copy is not).
    static let changes: Set<VersionKind> = [.saved, .modified, .created, .removed, .restored]

    /// Plans the undo of `writer`'s versions at or after `since` (ms since the epoch; nil: all).
    ///
    /// - Parameters:
    ///   - history: the file's versions oldest first, following moves (conflict copies, which
    ///     were never the file, are left out here).
    ///   - current: what the file holds now (its buffer's text when open); nil when there is none.
    public init(history: [Entry], current: [UInt8]?, writer: WriterPattern, since: Int64?) {
        let entries = history.filter { $0.version.kind != .conflictCopy }
        var text = current
        outcome = .unchanged
        for index in entries.indices.reversed() {
            let entry = entries[index]
            if let since, entry.version.time < since { break }
            guard writer.matches(entry.version) || writer.isAmong(entry.version) else { continue }
            if writer.isAmong(entry.version) {
                skipped.append((entry.version.id, "it is a save shared with \(entry.version.who)"))
                continue
            }
            if entry.version.kind == .moved {
                // Back to its old name, once the writer's later changes are taken back and if
                // nobody else changed the file since (then it is the bytes the move carried).
                guard let from = entry.version.from, text != nil, text == entry.content, movesBackTo == nil else {
                    skipped.append((entry.version.id, "moved from \(entry.version.from ?? "?"), and changed since: not moved back"))
                    continue
                }
                movesBackTo = from
                undone.append(entry.version.id)
                continue
            }
            guard Self.changes.contains(entry.version.kind) else { continue }
            let after = entry.version.kind == .removed ? nil : entry.content
            let before: [UInt8]?
            if index > entries.startIndex {
                let previous = entries[index - 1]
                before = previous.version.kind == .removed ? nil : previous.content
            } else if entry.version.kind == .modified {
                skipped.append((entry.version.id, "history has no version before it"))
                continue
            } else {
                before = nil
            }
            guard let reverted = Self.revert(after: after, before: before, onto: text) else {
                outcome = .collision(undone: Self.firstBefore(in: entries, writer: writer, since: since))
                return
            }
            text = reverted
            undone.append(entry.version.id)
        }
        guard !undone.isEmpty, text != current || movesBackTo != nil else { return }
        outcome = text.map(Outcome.write) ?? .remove
    }

    /// The file before the writer's earliest change in the window: the version before it
    /// (nil: no file then, or no version before it).
    static func firstBefore(in entries: [Entry], writer: WriterPattern, since: Int64?) -> [UInt8]? {
        guard
            let first = entries.firstIndex(where: { entry in
                entry.version.time >= (since ?? .min) && writer.matches(entry.version) && changes.contains(entry.version.kind)
            }), first > entries.startIndex
        else { return nil }
        let previous = entries[first - 1]
        return previous.version.kind == .removed ? nil : previous.content
    }

    /// The text with the change `before` → `after` reversed; nil when it collides with what
    /// the text has now (`.some(nil)`: the file is to be gone).
    static func revert(after: [UInt8]?, before: [UInt8]?, onto text: [UInt8]?) -> [UInt8]?? {
        switch (before, after) {
        case (nil, nil):
            return .some(text)
        case (nil, .some(let made)):
            // The writer made the file: it goes if nobody changed it since (or it is gone already).
            if text == nil || text == made { return .some(nil) }
            return nil
        case (.some(let old), nil):
            // The writer removed it: it comes back if nothing took its place.
            if text == nil || text == old { return .some(old) }
            return nil
        case (.some(let old), .some(let made)):
            guard let text else { return nil }
            if text == made { return .some(old) }
            if text == old { return .some(text) }
            if [old, made, text].contains(where: Reconciliation.isBinary) { return nil }
            switch LineMerge.merge(base: made, ours: text, theirs: old) {
            case .merged(let merged): return .some(merged)
            case .conflict: return nil
            }
        }
    }
}
