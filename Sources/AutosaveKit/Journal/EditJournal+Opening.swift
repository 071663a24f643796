import ByteNames
import FoundationEssentials
import Glibc
import SystemPackage

extension EditJournal {
    /// Opens the journal in `directory` (creating it), and returns what it holds that was never saved.
    ///
    /// A file that a power cut left without a whole header holds no record: it is started anew,
    /// and when bytes follow a header that never reached the disk, they are kept beside first.
    ///
    /// - Throws: `JournalError.futureVersion` or `.notAJournal` without touching the file, or `.system`.
    public static func open(directory: String, fsync: Bool) throws(JournalError) -> (EditJournal, Recovery) {
        let path = directory + "/journal.log"
        try makeDirectory(directory)
        try? FileDescriptor.currentDirectory.removeEntry(directory + "/journal.next")
        var existing: [UInt8] = []
        do { existing = try FileContents.read(path) } catch where error == .noSuchFileOrDirectory {} catch {
            throw .system(path: path, operation: "read", error)
        }
        var records: [JournalRecord] = []
        var validBytes = 0
        var version = JournalFormat.version
        var headerLoss: Recovery.HeaderLoss?
        if !existing.isEmpty, !JournalFormat.hasWholeHeader(existing), JournalFormat.isTornHeader(existing) {
            // Nothing in it can be a record: records start after the header and carry a checksum.
            // Bytes after a header of NULs are kept anyway, for whoever can make sense of them.
            var keptAs: String?
            if existing.dropFirst(JournalFormat.headerSize).contains(where: { $0 != 0 }) {
                let copy = freeName(in: directory, base: "journal.torn")
                // Not kept, not replaced: the error stops the start, and the file stays as it is.
                let kept = try Self.replaceFile(at: copy, in: directory, with: existing, operation: "keep a copy of")
                try? kept.close()
                keptAs = copy
            }
            headerLoss = Recovery.HeaderLoss(bytes: existing.count, keptAs: keptAs)
            existing = []
        }
        if !existing.isEmpty {
            guard existing.count >= JournalFormat.headerSize, Array(existing[0..<4]) == JournalFormat.magic else {
                throw .notAJournal(path: path)
            }
            version = JournalFormat.readLE32(existing, 4)
            guard version <= JournalFormat.version else {
                throw .futureVersion(path: path, found: version, supported: JournalFormat.version)
            }
            (records, validBytes) = JournalFormat.decode(existing)
        }
        let bases = basesDirectory(directory)
        let (recovered, broken) = replay(records) { path, digest in
            try? FileContents.read(BasePins.file(in: bases, path: path, digest: digest))
        }
        let changeIDs = RecentChangeIDs(replaying: records)
        let tornBytes = existing.isEmpty ? 0 : existing.count - validBytes
        var keptAs: String?
        if !broken.isEmpty {
            // Nothing is guessed and nothing thrown away: the journal as it was stays beside.
            keptAs = directory + "/journal.corrupt.log"
            do { try Self.replaceFile(at: keptAs!, in: directory, with: existing, operation: "keep a copy of").close() } catch {
                throw .system(path: keptAs!, operation: "keep a copy of", .ioError)
            }
        }
        // Start every run from a journal of only the unsaved records. Revisions restart with each
        // run, so an old run's `saved` marker must never meet a new run's record for the same path.
        // A journal with records on pinned bases is rewritten too: its pins then go. So is one of an
        // older format, which this agent would otherwise append records to that it cannot read.
        let isOlderFormat = version < JournalFormat.version
        if records.count > recovered.count || records.contains(where: { $0.kind == .baseEdits }) || isOlderFormat {
            var fresh = JournalFormat.header()
            let savesBegun = SavesBegun(recovered)
            for record in changeIDs.records() { fresh += JournalFormat.encode(record) }
            for record in recovered { fresh += JournalFormat.encode(record) }
            for record in savesBegun.records(of: recovered.map(\.path)) { fresh += JournalFormat.encode(record) }
            let descriptor = try replaceFile(at: path, in: directory, with: fresh)
            if broken.isEmpty { BasePins.clear(bases) }
            let journal = EditJournal(
                directory: directory, isDurable: fsync, file: descriptor, size: fresh.count, live: recovered, changeIDs: changeIDs,
                savesBegun: savesBegun)
            return (
                journal,
                Recovery(records: recovered, tornBytes: tornBytes, brokenChains: broken, keptAs: keptAs, headerLoss: headerLoss)
            )
        }
        // No record stands on a pin: any left (a crash before a released pin went) are litter.
        BasePins.clear(bases)
        if existing.isEmpty {
            // Made whole and renamed into place, whatever `journal.fsync` says: written in place,
            // a power cut could leave part of its header, and no later start would read it.
            let header = JournalFormat.header()
            let descriptor = try replaceFile(at: path, in: directory, with: header, operation: "create")
            let journal = EditJournal(directory: directory, isDurable: fsync, file: descriptor, size: header.count, live: [])
            return (journal, Recovery(records: [], tornBytes: 0, headerLoss: headerLoss))
        }
        let descriptor: FileDescriptor
        do {
            descriptor = try FileDescriptor.open(
                FilePath(path), .readWrite, options: [.create, .closeOnExec, .noFollow], permissions: [.ownerReadWrite])
            if validBytes < existing.count {
                try descriptor.resize(to: Int64(validBytes))
            }
            _ = try descriptor.seek(offset: Int64(validBytes), from: .start)
            if fsync { try descriptor.sync() }
        } catch {
            throw .system(path: path, operation: "open", error as? Errno ?? .ioError)
        }
        let journal = EditJournal(
            directory: directory, isDurable: fsync, file: descriptor, size: validBytes, live: recovered, changeIDs: changeIDs,
            savesBegun: SavesBegun(recovered))
        return (journal, Recovery(records: recovered, tornBytes: tornBytes, headerLoss: headerLoss))
    }

    /// Makes `directory` and any missing parent, mode 0700 (nothing when it exists).
    static func makeDirectory(_ directory: String) throws(JournalError) {
        do throws(Errno) { try Folders.make(directory) } catch {
            throw .system(path: directory, operation: "create journal directory", error)
        }
    }

    /// The first of `base.log`, `base.2.log`, `base.3.log`… in `directory` that does not exist.
    static func freeName(in directory: String, base: String) -> String {
        var number = 1
        while true {
            let name = directory + "/" + base + (number == 1 ? "" : ".\(number)") + ".log"
            if !FileDescriptor.currentDirectory.hasEntry(name) { return name }
            number += 1
        }
    }

    /// Writes `bytes` to a new file, syncs it, renames it over `path` and syncs the directory.
    ///
    /// - Returns: the new file, open for appending after `bytes`.
    /// - Throws: `JournalError.system` naming `path` and `operation`.
    static func replaceFile(
        at path: String, in directory: String, with bytes: [UInt8], operation: String = "compact"
    ) throws(JournalError) -> FileDescriptor {
        let next = directory + "/journal.next"
        var fresh: FileDescriptor?
        do {
            let opened = try FileDescriptor.open(
                FilePath(next), .readWrite, options: [.create, .truncate, .closeOnExec, .noFollow], permissions: [.ownerReadWrite])
            fresh = opened
            _ = try opened.writeAll(bytes)
            try opened.sync()
            try FileDescriptor.currentDirectory.rename(next, to: path)
            Folders.syncFolder(directory)
            return opened
        } catch {
            try? fresh?.close()
            try? FileDescriptor.currentDirectory.removeEntry(next)
            throw .system(path: path, operation: operation, error as? Errno ?? .ioError)
        }
    }

    /// The newest state per path that no `saved` record covers, as full records: `.edits`
    /// records are replayed onto the revision before them. One that does not fit it (that
    /// revision missing, splices outside its text, a different resulting length) is not guessed
    /// at: the path keeps its last good state, and the record is reported.
    ///
    /// - Parameter pinnedBase: the bytes of a path's pinned base with a digest (`.baseEdits`).
    static func replay(
        _ records: [JournalRecord], pinnedBase: (_ path: String, _ digest: UInt64) -> [UInt8]? = { _, _ in nil }
    ) -> (unsaved: [JournalRecord], broken: [BrokenChain]) {
        // Records are taken in the journal's order, not by revision: a buffer opened again, or
        // moved onto another's path, counts its revisions from 0 again, and what it wrote later
        // is newer whatever its number. (The journal never writes a buffer's older revision
        // after a newer one.)
        var latest: PathMap<JournalRecord> = [:]
        var broken: [BrokenChain] = []
        var savesBegun = SavesBegun()
        for record in records {
            switch record.kind {
            case .saved:
                // Written once nothing after it builds on what it covers: all of that is obsolete,
                // a broken chain included (its pin may be gone, its edits are on disk).
                if let current = latest[record.path], current.revision <= record.revision {
                    latest[record.path] = nil
                    savesBegun.forget(record.path)
                }
                broken.removeAll { $0.path.isSameName(as: record.path) && $0.revision <= record.revision }
            case .changeIDs:
                // Ids only (`RecentChangeIDs`): no text.
                continue
            case .saving:
                if let digest = record.baseDigest { savesBegun.append(digest, revision: record.revision, for: record.path) }
            case .write, .delete:
                // A whole record after a broken one (the buffer's text, once the file it stood on
                // changed) makes it obsolete: nothing was lost there.
                broken.removeAll { $0.path.isSameName(as: record.path) }
                latest[record.path] = record
            case .baseEdits:
                guard let digest = record.baseDigest, let bytes = pinnedBase(record.path, digest), ContentDigest.of(bytes) == digest else {
                    broken.append(BrokenChain(
                        path: record.path, revision: record.revision,
                        reason: "the version of the file its edits were made on is gone (its pinned copy is missing or changed)"))
                    continue
                }
                latest[record.path] = JournalRecord(
                    kind: .write, path: record.path, revision: record.revision - 1, text: TextRope(bytes), baseDigest: digest)
                fallthrough
            case .edits:
                guard let previous = latest[record.path], previous.kind == .write, previous.revision == record.revision - 1 else {
                    broken.append(BrokenChain(
                        path: record.path, revision: record.revision,
                        reason: "revision \(record.revision - 1), which its edits change, is not in the journal"))
                    continue
                }
                let splices = record.splices ?? []
                guard ByteSplice.fit(splices, length: previous.text.count) else {
                    broken.append(BrokenChain(
                        path: record.path, revision: record.revision, reason: "its edits do not lie within revision \(previous.revision)"))
                    continue
                }
                let text = previous.text.applying(splices)
                guard text.count == record.resultLength else {
                    broken.append(BrokenChain(
                        path: record.path, revision: record.revision,
                        reason: "its edits make \(text.count) bytes, not the \(record.resultLength ?? 0) it recorded"))
                    continue
                }
                latest[record.path] = JournalRecord(
                    kind: .write, path: record.path, revision: record.revision, changeID: record.changeID, text: text,
                    baseDigest: record.baseDigest)
            }
        }
        let unsaved = latest.sortedKeys.compactMap { path in
            latest[path].map { record in
                var record = record
                record.savesBegun = savesBegun.saves(of: path)
                return record
            }
        }
        return (unsaved, broken)
    }
}
