import ByteNames

extension Workspace {
    /// A file a patch changed (or, checked only, would change): its path and revision.
    public struct PatchedFile: Sendable, Equatable {
        public var path: String
        public var revision: Int
    }

    /// Applies a unified diff to the buffers of every file it names, all or nothing: each file's
    /// new text is worked out first, and only when every hunk of every file has its place are
    /// the buffers changed (each one revision, saved after the autosave window like any write).
    /// Files the patch creates get their missing folders.
    ///
    /// - Parameters:
    ///   - check: only say whether it applies; change nothing.
    ///   - ifRevision: for a patch of one file, refuse unless its buffer is at this revision.
    /// - Returns: the files, in the patch's order, with their new revisions (their current ones
    ///   when only checked).
    /// - Throws: `WorkspaceError.patchRefused` (nothing changed), `.invalidPath`, `.staleRevision`,
    ///   `.tooLarge`, `.unreadable`, `.journalFailed`.
    public func applyPatch(_ patch: [UInt8], check: Bool = false, ifRevision: Int? = nil) async throws(WorkspaceError) -> [PatchedFile] {
        let diff: UnifiedDiff
        do throws(UnifiedDiff.ParseError) { diff = try UnifiedDiff(parsing: patch) } catch { throw .patchRefused(.unreadable(error)) }
        if ifRevision != nil, diff.files.count != 1 {
            throw .patchRefused(.unreadable(.ifRevisionNeedsOneFile(files: diff.files.count)))
        }
        var planned: [(key: String, buffer: FileBuffer<C>, wasOpen: Bool, revision: Int, old: TextRope?, change: PatchedText?)] = []
        do throws(WorkspaceError) {
            for file in diff.files {
                if let from = file.oldPath, let to = file.newPath, !from.isSameName(as: to) { throw .patchRefused(.renames(from: from, to: to)) }
                let key = try normalize(file.path)
                guard !planned.contains(where: { $0.key.isSameName(as: key) }) else { throw .patchRefused(.sameFileTwice(path: key)) }
                let wasOpen = buffers[key] != nil
                let buffer = try await buffer(for: key)
                let (old, revision) = (await buffer.text, await buffer.revision)
                planned.append((key, buffer, wasOpen, revision, old, nil))
                if let ifRevision, ifRevision != revision { throw .staleRevision(path: key, expected: ifRevision, current: revision) }
                planned[planned.count - 1].change = try Self.patched(old, with: file, key: key)
            }
        } catch {
            for plan in planned { await closeIfOpenedOnlyToAsk(plan.buffer, at: plan.key, wasOpen: plan.wasOpen) }
            throw error
        }
        if check {
            for plan in planned { await closeIfOpenedOnlyToAsk(plan.buffer, at: plan.key, wasOpen: plan.wasOpen) }
            return planned.map { PatchedFile(path: $0.key, revision: $0.revision) }
        }
        var applied: [PatchedFile] = []
        var tickets: [AcceptedEdit] = []
        do throws(WorkspaceError) {
            for plan in planned {
                if plan.old == nil { try prepareFolder(for: plan.key, createParents: true) }
                let accepted: FileBuffer<C>.Accepted
                switch plan.change! {
                case .deleted: accepted = try await plan.buffer.delete(changeID: nil, ifRevision: plan.revision)
                case .created(let text): accepted = try await plan.buffer.write(text, changeID: nil, ifRevision: plan.revision)
                case .changed(let splices): accepted = try await plan.buffer.splice(splices, ifRevision: plan.revision)
                }
                // Changed now, journaled or not: a failure from here on must undo it too.
                applied.append(PatchedFile(path: plan.key, revision: accepted.revision))
                tickets.append(AcceptedEdit(revision: accepted.revision, ticket: try await journal(accepted), logger: logger))
            }
        } catch {
            // Another client edited a file between the look and the change (or a folder could
            // not be made): the files already changed get their text back, as a new revision.
            for (plan, done) in zip(planned, applied) {
                let undone = plan.old == nil
                    ? try? await plan.buffer.delete(changeID: nil, ifRevision: done.revision)
                    : try? await plan.buffer.write(plan.old!, changeID: nil, ifRevision: done.revision)
                if let undone { _ = try? await journal(undone) }
            }
            throw error
        }
        for ticket in tickets { try await ticket.waitUntilDurable() }
        return applied
    }

    /// What one file's part of the patch does to its buffer.
    enum PatchedText {
        /// The patch deletes the file.
        case deleted
        /// The patch makes the file, with this text.
        case created(TextRope)
        /// The patch changes the file's text by these splices.
        case changed([ByteSplice])
    }

    /// What one file's part of the patch does, once every hunk has its place.
    private static func patched(_ old: TextRope?, with file: UnifiedDiff.FilePatch, key: String) throws(WorkspaceError) -> PatchedText {
        switch (file.oldPath, file.newPath, old) {
        case (nil, _, .some): throw .patchRefused(.fileExists(path: key))
        case (.some, _, nil): throw .patchRefused(.noSuchFile(path: key))
        default: break
        }
        let splices: [ByteSplice]
        do throws(PatchError) { splices = try HunkPlacement.splices(file.hunks, in: old ?? TextRope(), path: key) } catch {
            throw .patchRefused(error)
        }
        guard let old else { return .created(TextRope().applying(splices)) }
        // A deletion removes the file the patch saw, all of it, or nothing.
        guard file.newPath != nil else {
            let left = old.count + splices.reduce(0) { $0 + $1.text.count - ($1.end - $1.start) }
            guard left == 0 else { throw .patchRefused(.deletionLeavesText(path: key, bytes: left)) }
            return .deleted
        }
        return .changed(splices)
    }
}
