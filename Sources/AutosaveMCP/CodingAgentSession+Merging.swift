import AutosaveKit
import ByteNames

/// Where an edit is placed: the text the model last saw, merged with what others did since; and,
/// for a call whose earlier try's answer was lost, the text that try was made on.
extension CodingAgentSession {
    /// The view an edit is made from: the revision asked for (one this session read, else the
    /// current one), else the last one the model read when others changed the file since.
    func baseView(of file: CurrentFile, ifRevision: Int?) throws -> View? {
        let seen = views[file.path]
        if let ifRevision {
            // What the model read first: revisions count again from 0 when the agent restarts, so
            // the same number on the agent's buffer can be another text.
            if let seen, seen.revision == ifRevision { return seen }
            guard ifRevision == file.revision else {
                throw ToolFailure(
                    "\(file.path) was not changed: it is at revision \(file.revision), not \(ifRevision), and this session has not read revision \(ifRevision); read_file it again")
            }
            return file.text.map { View(revision: file.revision, text: $0) }
        }
        // Revisions start again when the agent restarts: the text must match too.
        if let seen, seen.revision != file.revision || seen.text != (file.text ?? []) { return seen }
        return nil
    }

    /// Merges the model's text (made from `base`) with the file's; throws naming the lines that
    /// collide when both changed the same ones.
    func merge(base: View, yours: [UInt8], file: CurrentFile, yourLines: String) throws -> [UInt8] {
        switch LineMerge.merge(base: base.text, ours: file.text ?? [], theirs: yours) {
        case .merged(let merged): return merged
        case .conflict:
            throw ToolFailure(
                "\(file.path) was not changed: your edit (\(yourLines) of revision \(base.revision)) collides with edits made since (\(Self.changedLines(from: base.text, to: file.text ?? []))); the file is at revision \(file.revision) now. read_file it again and redo your edit on what is there")
        }
    }

    func mergedNote(base: View, file: CurrentFile) -> String {
        "Merged: the file had changed since you read revision \(base.revision) (\(Self.changedLines(from: base.text, to: file.text ?? [])), by someone else); their edits and yours are both in."
    }

    /// For a call whose earlier try on `file` lost its answer: the text that try was made on (the
    /// base this try merges from, so a change already in is not made again), and whether the file
    /// holds exactly what it made.
    func doubt(about file: CurrentFile, _ attempt: Attempt) -> (base: View, isIn: Bool)? {
        guard case .text(let path, let base, let result)? = attempt.inDoubt, path.isSameName(as: file.path) else { return nil }
        return (base, file.text == result)
    }

    /// The answer when the file already holds what the call makes: nothing is sent, and what the
    /// model knows of the file is what it holds.
    func alreadyThere(_ file: CurrentFile, answerLost: Bool) -> String {
        views[file.path] = View(revision: file.revision, text: file.text ?? [])
        return answerLost
            ? "\(file.path) has your change, at revision \(file.revision): the agent stopped before it answered, "
                + "but it had taken the change (made once, not twice)."
            : "\(file.path) already holds your change (someone made it since you read it): nothing to do, revision \(file.revision)."
    }
}
