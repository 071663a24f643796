@testable import AutosaveKit
import AutosaveTestKit
import Foundation
import SystemPackage
import Testing

@Suite struct EditJournalTests {
    func record(_ path: String, _ revision: Int, _ text: String, id: UUID? = nil) -> JournalRecord {
        JournalRecord(kind: .write, path: path, revision: revision, changeID: id, content: Array(text.utf8))
    }

    @Test func unsavedEditsComeBackAfterAReopen() async throws {
        let state = try TemporaryDirectory()
        let id = UUID()
        do {
            let (journal, recovery) = try EditJournal.open(directory: state.path, fsync: true)
            #expect(recovery.records.isEmpty)
            try await journal.append(record("a.txt", 1, "one"))
            try await journal.append(record("a.txt", 2, "two", id: id))
            try await journal.append(record("b.txt", 1, "bee"))
            try await journal.markSaved("b.txt", revision: 1)
            try await journal.append(JournalRecord(kind: .delete, path: "c.txt", revision: 4))
        }
        let (_, recovery) = try EditJournal.open(directory: state.path, fsync: true)
        #expect(recovery.records == [record("a.txt", 2, "two", id: id), JournalRecord(kind: .delete, path: "c.txt", revision: 4)])
        #expect(recovery.tornBytes == 0)
    }

    @Test func aTornTailIsIgnoredAndCutOff() async throws {
        let state = try TemporaryDirectory()
        do {
            let (journal, _) = try EditJournal.open(directory: state.path, fsync: false)
            try await journal.append(record("a.txt", 1, "kept"))
            try await journal.append(record("a.txt", 2, "torn by a crash"))
        }
        let path = state.path + "/journal.log"
        let bytes = try FileContents.read(path)
        try Data(bytes.dropLast(5)).write(to: URL(fileURLWithPath: path))
        let (journal, recovery) = try EditJournal.open(directory: state.path, fsync: false)
        #expect(recovery.records == [record("a.txt", 1, "kept")])
        #expect(recovery.tornBytes > 0)
        try await journal.append(record("a.txt", 3, "after the crash"))
        let (_, again) = try EditJournal.open(directory: state.path, fsync: false)
        #expect(again.records == [record("a.txt", 3, "after the crash")])
    }

    @Test func aCorruptRecordEndsTheReplay() async throws {
        let state = try TemporaryDirectory()
        do {
            let (journal, _) = try EditJournal.open(directory: state.path, fsync: false)
            try await journal.append(record("a.txt", 1, "good"))
            try await journal.append(record("a.txt", 2, "flipped"))
        }
        let path = state.path + "/journal.log"
        var bytes = try FileContents.read(path)
        bytes[bytes.count - 2] ^= 0xFF
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let (_, recovery) = try EditJournal.open(directory: state.path, fsync: false)
        #expect(recovery.records == [record("a.txt", 1, "good")])
    }

    @Test func aJournalFromTheFutureIsRefusedAndLeftAlone() throws {
        let state = try TemporaryDirectory()
        let future = Array("ASJ1".utf8) + [9, 0, 0, 0] + [1, 2, 3]
        try Data(future).write(to: URL(fileURLWithPath: state.path + "/journal.log"))
        #expect(throws: JournalError.futureVersion(path: state.path + "/journal.log", found: 9, supported: JournalFormat.version)) {
            try EditJournal.open(directory: state.path, fsync: true)
        }
        #expect(try FileContents.read(state.path + "/journal.log") == future)
        for foreign in ["not a journal", "ASJ"] {
            // "ASJ" alone is a part of a header, but not with a byte after it that no header has.
            let bytes = Array(foreign.utf8) + (foreign == "ASJ" ? [UInt8(ascii: "2")] : [])
            try Data(bytes).write(to: URL(fileURLWithPath: state.path + "/journal.log"))
            #expect(throws: JournalError.notAJournal(path: state.path + "/journal.log")) {
                try EditJournal.open(directory: state.path, fsync: true)
            }
            #expect(try FileContents.read(state.path + "/journal.log") == bytes, "left untouched")
        }
    }

    /// What a power cut leaves of a journal's first write, its header: a part of it (a write cut
    /// part-way), or NULs (its size reached the disk before its bytes). Such a file holds no
    /// record, so it is started anew rather than refused, which kept the agent from starting
    /// until someone moved the file (found by `powercut --no-fsync`, seed 4242).
    @Test func aJournalACutLeftWithoutAWholeHeaderStartsAnew() async throws {
        let header = JournalFormat.header()
        for torn in [Array(header.prefix(1)), Array(header.prefix(3)), Array(header.prefix(7)), [UInt8](repeating: 0, count: 4096)] {
            let state = try TemporaryDirectory()
            let path = state.path + "/journal.log"
            try Data(torn).write(to: URL(fileURLWithPath: path))
            do {
                let (journal, recovery) = try EditJournal.open(directory: state.path, fsync: false)
                #expect(recovery.records.isEmpty)
                #expect(recovery.headerLoss == .init(bytes: torn.count, keptAs: nil), "\(torn.count) bytes")
                try await journal.append(record("a.txt", 1, "after the cut"))
            }
            let (_, again) = try EditJournal.open(directory: state.path, fsync: false)
            #expect(again.records == [record("a.txt", 1, "after the cut")], "\(torn.count) bytes")
            #expect(again.headerLoss == nil)
        }
    }

    /// A header of NULs with other bytes after it: nothing the agent can read, but not nothing,
    /// so the bytes are kept beside, under a name no earlier copy has, before the journal starts anew.
    @Test func bytesAfterALostHeaderAreKeptBesideTheNewJournal() throws {
        let state = try TemporaryDirectory()
        let path = state.path + "/journal.log"
        for (attempt, kept) in ["journal.torn.log", "journal.torn.2.log"].enumerated() {
            let lost = [UInt8](repeating: 0, count: JournalFormat.headerSize) + Array("record \(attempt)".utf8)
            try Data(lost).write(to: URL(fileURLWithPath: path))
            let (_, recovery) = try EditJournal.open(directory: state.path, fsync: true)
            #expect(recovery.headerLoss == .init(bytes: lost.count, keptAs: state.path + "/" + kept))
            #expect(try FileContents.read(state.path + "/" + kept) == lost)
            #expect(try FileContents.read(path) == JournalFormat.header(), "a fresh journal, header only")
        }
        #expect(try FileContents.read(state.path + "/journal.torn.log").last == UInt8(ascii: "0"), "the first copy kept")
    }

    @Test func concurrentAppendsShareFsyncsAndAllSurvive() async throws {
        let state = try TemporaryDirectory()
        let (journal, _) = try EditJournal.open(directory: state.path, fsync: true)
        try await withThrowingTaskGroup { group in
            for client in 0..<8 {
                group.addTask {
                    for index in 1...50 {
                        try await journal.append(self.record("c\(client).txt", index, "client \(client) edit \(index)"))
                    }
                }
            }
            try await group.waitForAll()
        }
        let (_, recovery) = try EditJournal.open(directory: state.path, fsync: true)
        #expect(recovery.records.count == 8)
        for client in 0..<8 {
            #expect(recovery.records.contains(self.record("c\(client).txt", 50, "client \(client) edit 50")))
        }
    }

    @Test func savedRevisionsAreCompactedAway() async throws {
        let state = try TemporaryDirectory()
        let (journal, _) = try EditJournal.open(directory: state.path, fsync: false)
        let big = String(repeating: "x", count: 64 << 10)
        for revision in 1...100 {
            try await journal.append(record("a.txt", revision, big + "\(revision)"))
            try await journal.markSaved("a.txt", revision: revision)
        }
        try await journal.append(record("b.txt", 1, "still unsaved"))
        #expect(await journal.byteCount < EditJournal.compactionThreshold + (70 << 10) * 2)
        let (_, recovery) = try EditJournal.open(directory: state.path, fsync: false)
        #expect(recovery.records == [record("b.txt", 1, "still unsaved")])
    }

    @Test(.enabled(if: SmallFilesystem.isAvailable, "skipped: mounting a tmpfs needs root"))
    func aFullDiskRefusesTheEditButKeepsEveryEarlierOneAndRecovers() async throws {
        let disk = try SmallFilesystem(bytes: 64 << 10)
        let filler = disk.path + "/filler"
        #expect(FileManager.default.createFile(atPath: filler, contents: Data(count: 24 << 10)))
        let (journal, _) = try EditJournal.open(directory: disk.path + "/journal", fsync: true)
        let page = String(repeating: "p", count: 6000)
        var accepted = 0
        var refusal: JournalError?
        for revision in 1...40 {
            do {
                try await journal.append(record("f\(revision).txt", revision, page))
                accepted = revision
            } catch {
                refusal = error
                break
            }
        }
        #expect(refusal == .system(path: disk.path + "/journal/journal.log", operation: "append to", .noSpace))
        #expect(accepted > 0 && accepted < 40)
        // The space comes back: the next edit is taken, and nothing before it was hidden by a torn record.
        try FileManager.default.removeItem(atPath: filler)
        try await journal.append(record("after.txt", 1, "after the disk had room again"))
        let (_, recovery) = try EditJournal.open(directory: disk.path + "/journal", fsync: true)
        #expect(recovery.tornBytes == 0)
        #expect(recovery.records.count == accepted + 1)
        #expect(recovery.records.contains(record("after.txt", 1, "after the disk had room again")))
    }

    @Test func aJournalDeletedWithItsStateDirectoryIsWrittenAgainWithEveryUnsavedEdit() async throws {
        let project = try TemporaryDirectory()
        let directory = project.path + "/.autosave/journal"
        let (journal, _) = try EditJournal.open(directory: directory, fsync: true)
        try await journal.append(record("a.txt", 1, "alpha"))
        try await journal.append(record("b.txt", 1, "beta"))
        try await journal.markSaved("b.txt", revision: 1)
        try FileManager.default.removeItem(atPath: project.path + "/.autosave")
        try await journal.append(record("c.txt", 1, "gamma"))
        #expect(await journal.recreatedCount == 1)
        let (_, recovery) = try EditJournal.open(directory: directory, fsync: true)
        #expect(recovery.records == [record("a.txt", 1, "alpha"), record("c.txt", 1, "gamma")])
    }
}

/// Found by the crash soak: revisions restart with every agent run.
@Suite struct JournalAcrossRunsTests {
    func record(_ path: String, _ revision: Int, _ text: String) -> JournalRecord {
        JournalRecord(kind: .write, path: path, revision: revision, content: Array(text.utf8))
    }

    @Test func anOldRunsSavedMarkerNeverHidesANewRunsEdit() async throws {
        let state = try TemporaryDirectory()
        do {
            // Run 1: revisions 1 and 2 written and saved.
            let (journal, _) = try EditJournal.open(directory: state.path, fsync: true)
            try await journal.append(record("a.txt", 1, "one"))
            try await journal.markSaved("a.txt", revision: 1)
            try await journal.append(record("a.txt", 2, "two"))
            try await journal.markSaved("a.txt", revision: 2)
        }
        do {
            // Run 2 (after a crash): a new buffer starts again at revision 1; acknowledged, then killed.
            let (journal, recovery) = try EditJournal.open(directory: state.path, fsync: true)
            #expect(recovery.records.isEmpty)
            try await journal.append(record("a.txt", 1, "three"))
        }
        let (_, recovery) = try EditJournal.open(directory: state.path, fsync: true)
        #expect(recovery.records == [record("a.txt", 1, "three")])
    }
}

/// Journals written before stay readable: the record checksum is the standard CRC-32.
@Suite struct CRC32Tests {
    @Test func theChecksumIsTheStandardCRC32AtEveryLength() {
        #expect(CRC32.checksum(Array("123456789".utf8)) == 0xCBF4_3926, "the check value of CRC-32/ISO-HDLC")
        var generator = SystemRandomNumberGenerator()
        for length in 0..<80 {
            let bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            var crc: UInt32 = 0xFFFF_FFFF
            for byte in bytes {
                crc ^= UInt32(byte)
                for _ in 0..<8 { crc = crc & 1 == 1 ? 0xEDB8_8320 ^ (crc >> 1) : crc >> 1 }
            }
            #expect(CRC32.checksum(bytes) == crc ^ 0xFFFF_FFFF, "\(length) bytes")
        }
    }

    /// A record's head and content are checked as one run of bytes, without being joined.
    @Test func aChecksumContinuedOverTwoPartsIsTheChecksumOfBoth() {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<50 {
            let whole = (0..<Int.random(in: 0..<300, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let cut = Int.random(in: 0...whole.count, using: &generator)
            let (head, tail) = (Array(whole[..<cut]), Array(whole[cut...]))
            let continued = tail.withUnsafeBytes { CRC32.checksum($0, continuing: CRC32.checksum(head)) }
            #expect(continued == CRC32.checksum(whole), "cut at \(cut) of \(whole.count)")
        }
    }
}

/// Ranged edits are journaled as what they change: a keystroke in a large file costs bytes, and
/// a crash brings back exactly the text the edits made, or says which record it could not replay.
@Suite struct DeltaJournalTests {
    /// Revision `revision`'s record as a buffer hands it over: the full text and the splices
    /// that made it from the text before.
    let buffer = UUID()

    func edited(_ path: String, _ revision: Int, _ text: [UInt8], _ splices: [ByteSplice], by source: UUID? = nil) -> JournalRecord {
        var record = JournalRecord(kind: .write, path: path, revision: revision, content: text)
        record.splices = splices
        record.source = source ?? buffer
        return record
    }

    func full(_ path: String, _ revision: Int, _ text: [UInt8], by source: UUID? = nil) -> JournalRecord {
        var record = JournalRecord(kind: .write, path: path, revision: revision, content: text)
        record.source = source ?? buffer
        return record
    }

    /// After a rename put another buffer at the path, its splices are of its own text, not of
    /// the record the journal holds for that path: they are written whole.
    @Test func splicesOfAnotherBufferAtThePathAreWrittenWhole() async throws {
        let state = try TemporaryDirectory()
        let (journal, _) = try EditJournal.open(directory: state.path, fsync: false)
        let long = Array(String(repeating: "text of the buffer that was here\n", count: 100).utf8)
        try await journal.append(full("b.txt", 5, long))
        var moved = Array(String(repeating: "text of the buffer that moved here\n", count: 100).utf8)
        let splice = ByteSplice(start: 0, end: 0, text: Array("!".utf8))
        moved = ByteSplice.apply([splice], to: moved)
        let before = await journal.byteCount
        try await journal.append(edited("b.txt", 6, moved, [splice], by: UUID()))
        #expect(await journal.byteCount - before >= moved.count, "written whole")
        let (_, recovery) = try EditJournal.open(directory: state.path, fsync: false)
        #expect(recovery.records.map(\.content) == [moved])
    }

    @Test func aThousandKeystrokesInALargeFileCostBytesAndComeBackWhole() async throws {
        let state = try TemporaryDirectory()
        var text = Array(String(repeating: "a line of a large file\n", count: 20_000).utf8)
        var random = SystemRandomNumberGenerator()
        do {
            let (journal, _) = try EditJournal.open(directory: state.path, fsync: false)
            try await journal.append(full("big.txt", 1, text))
            let afterSnapshot = await journal.byteCount
            for revision in 2...1_001 {
                let at = Int.random(in: 0...text.count, using: &random)
                let end = min(text.count, at + Int.random(in: 0...2, using: &random))
                let splice = ByteSplice(start: at, end: end, text: Array("k".utf8))
                text = ByteSplice.apply([splice], to: text)
                try await journal.append(edited("big.txt", revision, text, [splice]))
            }
            let perKeystroke = (await journal.byteCount - afterSnapshot) / 1_000
            #expect(perKeystroke < 200, "a keystroke cost \(perKeystroke) bytes of journal, in a \(text.count)-byte file")
        }
        let (_, recovery) = try EditJournal.open(directory: state.path, fsync: false)
        #expect(recovery.records.count == 1)
        #expect(recovery.records.first?.revision == 1_001)
        #expect(recovery.records.first?.content == text, "the replayed edits make the text the buffer had")
        #expect(recovery.brokenChains.isEmpty)
    }

    @Test func editsPastTheContentsSizeAndEditsAfterASaveAreWrittenWhole() async throws {
        let state = try TemporaryDirectory()
        let (journal, _) = try EditJournal.open(directory: state.path, fsync: false)
        var text = Array("short\n".utf8)
        try await journal.append(full("a.txt", 1, text))
        // A splice as large as the text: a full record is cheaper to replay.
        let large = ByteSplice(start: 0, end: 0, text: Array("a long insertion\n".utf8))
        text = ByteSplice.apply([large], to: text)
        var before = await journal.byteCount
        try await journal.append(edited("a.txt", 2, text, [large]))
        #expect(await journal.byteCount - before >= JournalFormat.fixedPayload + text.count, "written whole")
        try await journal.markSaved("a.txt", revision: 2)
        // Revision 2 is saved, so the journal no longer holds it: revision 3 cannot build on it.
        let small = ByteSplice(start: 0, end: 1, text: Array("A".utf8))
        text = ByteSplice.apply([small], to: text)
        before = await journal.byteCount
        try await journal.append(edited("a.txt", 3, text, [small]))
        #expect(await journal.byteCount - before >= JournalFormat.fixedPayload + text.count, "written whole after a save")
        let (_, recovery) = try EditJournal.open(directory: state.path, fsync: false)
        #expect(recovery.records.map(\.content) == [text])
    }

    /// The first keystroke in a clean file, as a buffer hands it over: the bytes it was made on.
    func firstEdit(of file: String, in folder: TemporaryDirectory, _ splice: ByteSplice) throws -> (JournalRecord, [UInt8]) {
        let original = try FileContents.read(folder.path + "/" + file)
        let text = ByteSplice.apply([splice], to: original)
        var record = edited(file, 2, text, [splice])
        record.baseDigest = ContentDigest.of(original)
        record.editedBase = EditedBase(bytes: original)
        return (record, text)
    }

    /// Journals `first` (a clean file's first keystroke, `firstEdit`), then one `k` typed every
    /// `step` bytes for revisions 3 through `last`, each on the same base; returns the text they make.
    func typeKeystrokes(after first: (JournalRecord, [UInt8]), through last: Int, every step: Int, into journal: EditJournal) async throws -> [UInt8] {
        var text = first.1
        try await journal.append(first.0)
        for revision in 3...last {
            let splice = ByteSplice(start: revision * step, end: revision * step, text: Array("k".utf8))
            text = ByteSplice.apply([splice], to: text)
            var next = edited(first.0.path, revision, text, [splice])
            next.baseDigest = first.0.baseDigest
            try await journal.append(next)
        }
        return text
    }

    /// A clean file's first keystrokes cost bytes too: the journal pins the file they were made
    /// on (a hard link) instead of writing it, and a crash brings them back from the pin, even
    /// after a tool replaced the file by rename while the agent was down.
    @Test func aCleanFilesFirstKeystrokesStandOnAPinnedCopyThatOutlivesARename() async throws {
        let (project, state) = (try TemporaryDirectory(), try TemporaryDirectory())
        // Past `pinnedBaseSize`: a file that is cheap to journal whole is never pinned.
        let original = Array(String(repeating: "a line of a large file\n", count: 50_000).utf8)
        try TemporaryDirectory.writeFile(project.path + "/big.txt", original)
        let text: [UInt8]
        do {
            let (journal, _) = try EditJournal.open(directory: state.path, fsync: true)
            text = try await typeKeystrokes(
                after: try firstEdit(of: "big.txt", in: project, ByteSplice(start: 5, end: 6, text: Array("L".utf8))), through: 50,
                every: 10, into: journal)
            let size = await journal.byteCount
            #expect(size < 10_000, "50 keystrokes in a \(original.count)-byte file cost \(size) bytes")
        }
        // While the agent is down, a tool replaces the file by rename.
        try TemporaryDirectory.writeFile(project.path + "/big.tmp", Array("replaced\n".utf8))
        #expect(rename(project.path + "/big.tmp", project.path + "/big.txt") == 0)
        let (_, recovery) = try EditJournal.open(directory: state.path, fsync: true)
        #expect(recovery.brokenChains.isEmpty)
        #expect(recovery.records.count == 1 && recovery.records.first?.revision == 50)
        #expect(recovery.records.first?.content == text, "the pinned version plus the keystrokes")
        #expect(recovery.records.first?.baseDigest == ContentDigest.of(original), "still the version the edits were made on")
        #expect(try FileManager.default.contentsOfDirectory(atPath: state.path + "/bases").isEmpty, "the rewritten journal needs no pin")
    }

    @Test func aPinIsGoneOnceItsChainIsSavedAndAPinThatChangedIsReportedNotGuessed() async throws {
        let (project, state) = (try TemporaryDirectory(), try TemporaryDirectory())
        try TemporaryDirectory.writeFile(project.path + "/a.txt", Array(String(repeating: "alpha\n", count: 200_000).utf8))
        try TemporaryDirectory.writeFile(project.path + "/b.txt", Array(String(repeating: "beta\n", count: 250_000).utf8))
        let (journal, _) = try EditJournal.open(directory: state.path, fsync: true)
        let (first, _) = try firstEdit(of: "a.txt", in: project, ByteSplice(start: 0, end: 1, text: Array("A".utf8)))
        try await journal.append(first)
        #expect(try FileManager.default.contentsOfDirectory(atPath: state.path + "/bases").count == 1)
        try await journal.markSaved("a.txt", revision: 2)
        #expect(try FileManager.default.contentsOfDirectory(atPath: state.path + "/bases").isEmpty, "saved: the pin goes")
        let (second, _) = try firstEdit(of: "b.txt", in: project, ByteSplice(start: 0, end: 1, text: Array("B".utf8)))
        try await journal.append(second)
        // The pin itself changes while the agent is down (nothing of the agent's does this).
        let pin = try #require(try FileManager.default.contentsOfDirectory(atPath: state.path + "/bases").first)
        let handle = try #require(FileHandle(forWritingAtPath: state.path + "/bases/" + pin))
        try handle.write(contentsOf: Data("BETA".utf8))
        try handle.close()
        let (_, recovery) = try EditJournal.open(directory: state.path, fsync: true)
        #expect(recovery.records.isEmpty, "nothing is guessed")
        #expect(recovery.brokenChains.map(\.path) == ["b.txt"])
        #expect(recovery.brokenChains.first?.reason == "the version of the file its edits were made on is gone (its pinned copy is missing or changed)")
        #expect(recovery.keptAs != nil, "the journal as it was is kept")
    }

    /// Whatever a tool does to the file while the agent is down (in place or not), the pin is the
    /// version the keystrokes were made on: they come back byte for byte, and the file is left as
    /// the tool left it. (A pin was a hard link: an in-place write changed it too, and the
    /// keystrokes were reported lost.)
    @Test(arguments: OutsideWrite.allCases)
    func aChainComesBackWhateverHappensToTheFileWhileTheAgentIsDown(_ change: OutsideWrite) async throws {
        let (project, state) = (try TemporaryDirectory(), try TemporaryDirectory())
        try TemporaryDirectory.writeFile(project.path + "/big.txt", Array(String(repeating: "a line of a large file\n", count: 50_000).utf8))
        let first = try firstEdit(of: "big.txt", in: project, ByteSplice(start: 5, end: 6, text: Array("L".utf8)))
        let (journal, _) = try EditJournal.open(directory: state.path, fsync: true)
        let text = try await typeKeystrokes(after: first, through: 7, every: 100, into: journal)
        let before = try? FileContents.read(project.path + "/big.txt")
        try change.apply(to: project.path + "/big.txt")
        #expect(change == .nothing || (try? FileContents.read(project.path + "/big.txt")) != before)
        let (_, recovery) = try EditJournal.open(directory: state.path, fsync: true)
        #expect(recovery.brokenChains.isEmpty, "\(recovery.brokenChains)")
        #expect(recovery.records.map(\.content) == [text], "the pinned version plus the keystrokes")
        #expect(recovery.records.first?.baseDigest == first.0.baseDigest, "still naming the version they were made on")
    }

    /// A pin is written once and made durable with the record that stands on it: a power cut after
    /// the acknowledgement cannot take it. The copy has its own inode, not the file's.
    @Test func aPinIsACopyOfItsOwnNotALinkToTheFile() async throws {
        let (project, state) = (try TemporaryDirectory(), try TemporaryDirectory())
        try TemporaryDirectory.writeFile(project.path + "/big.txt", Array(String(repeating: "a line of a large file\n", count: 50_000).utf8))
        let (first, _) = try firstEdit(of: "big.txt", in: project, ByteSplice(start: 0, end: 1, text: Array("A".utf8)))
        let (journal, _) = try EditJournal.open(directory: state.path, fsync: true)
        try await journal.append(first)
        let pins = try FileManager.default.contentsOfDirectory(atPath: state.path + "/bases")
        #expect(pins.count == 1, "one pin and no temp file left: \(pins)")
        let pin = try #require(Fingerprint.of(state.path + "/bases/" + (pins.first ?? "")))
        let file = try #require(Fingerprint.of(project.path + "/big.txt"))
        #expect(pin.inode != file.inode && file.links == 1 && pin.links == 1)
        #expect(try FileContents.read(state.path + "/bases/" + (pins.first ?? "")) == first.editedBase?.bytes)
    }

    /// A save notes what it is about to write before it changes the file: recovery gets, with the
    /// record, every version a save of its buffer was writing since its records were last saved
    /// (the file may hold any of them), through a restart's rewrite and a compaction, and no
    /// longer once a save covered the record.
    @Test func theVersionsSavesWereWritingComeBackWithTheRecord() async throws {
        let state = try TemporaryDirectory()
        let (one, two) = (ContentDigest.of(Array("one\n".utf8)), ContentDigest.of(Array("one\ntwo\n".utf8)))
        do {
            let (journal, _) = try EditJournal.open(directory: state.path, fsync: false)
            try await journal.append(full("a.txt", 1, Array("one\n".utf8)))
            try await journal.willSave("a.txt", revision: 1, digest: one)
            // Revision 2, taken while revision 1 was written; its save landed, then a crash.
            try await journal.append(full("a.txt", 2, Array("one\ntwo\n".utf8)))
            try await journal.markSaved("a.txt", revision: 1, source: buffer)
            try await journal.append(full("b.txt", 1, Array("bee\n".utf8)))
            try await journal.willSave("b.txt", revision: 1, digest: ContentDigest.of(Array("bee\n".utf8)))
            try await journal.markSaved("b.txt", revision: 1, source: buffer)
        }
        var (journal, recovery) = try EditJournal.open(directory: state.path, fsync: false)
        #expect(recovery.records.map(\.path) == ["a.txt"])
        #expect(recovery.records.first?.savesBegun.map(\.digest) == [one])
        try await journal.willSave("a.txt", revision: 2, digest: two)
        // A compaction (another file's large record saved) keeps them.
        try await journal.append(full("c.txt", 1, Array(String(repeating: "x", count: EditJournal.compactionThreshold).utf8)))
        try await journal.markSaved("c.txt", revision: 1, source: buffer)
        (journal, recovery) = try EditJournal.open(directory: state.path, fsync: false)
        #expect(recovery.records.map(\.path) == ["a.txt"])
        #expect(
            recovery.records.first?.savesBegun == [.init(digest: one, revision: 1), .init(digest: two, revision: 2)],
            "through the restart's rewrite and a compaction, each with the revision it wrote")
        try await journal.markSaved("a.txt", revision: 2)
        try await journal.append(full("a.txt", 3, Array("three\n".utf8)))
        (_, recovery) = try EditJournal.open(directory: state.path, fsync: false)
        #expect(recovery.records.first?.savesBegun.isEmpty == true, "saved since: the file holds none of them any more")
    }

    @Test func pinsNoRecordStandsOnAreClearedAtTheStart() async throws {
        let state = try TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: state.path + "/bases", withIntermediateDirectories: true)
        try TemporaryDirectory.writeFile(state.path + "/bases/1f-2e", Array("left by a crash\n".utf8))
        _ = try EditJournal.open(directory: state.path, fsync: false)
        #expect(try FileManager.default.contentsOfDirectory(atPath: state.path + "/bases").isEmpty)
    }

    /// The pin is the bytes the buffer read, not whatever the file holds when the edit comes: a
    /// file replaced between the read and the first edit does not become the chain's base.
    @Test func aPinIsTheVersionTheBufferReadEvenWhenTheFileChangedSince() async throws {
        let (project, state) = (try TemporaryDirectory(), try TemporaryDirectory())
        try TemporaryDirectory.writeFile(project.path + "/a.txt", Array(String(repeating: "alpha\n", count: 200_000).utf8))
        let (record, text) = try firstEdit(of: "a.txt", in: project, ByteSplice(start: 0, end: 1, text: Array("A".utf8)))
        try TemporaryDirectory.writeFile(project.path + "/a.txt", Array("other\n".utf8))
        let (journal, _) = try EditJournal.open(directory: state.path, fsync: false)
        try await journal.append(record)
        #expect(await journal.byteCount < 1_000, "the keystroke, not the text")
        let (_, recovery) = try EditJournal.open(directory: state.path, fsync: false)
        #expect(recovery.brokenChains.isEmpty)
        #expect(recovery.records.map(\.content) == [text])
    }

    @Test func anEditsRecordThatDoesNotFitIsReportedNotGuessedAndTheJournalIsKept() async throws {
        let state = try TemporaryDirectory()
        let first = JournalRecord(kind: .write, path: "a.txt", revision: 1, content: Array("one\n".utf8))
        // Revision 3's edits, but revision 2 is not in the journal.
        let orphan = JournalRecord(kind: .write, path: "a.txt", revision: 3, content: Array("one!\n".utf8))
            .asEdits([ByteSplice(start: 3, end: 3, text: Array("!".utf8))])
        // Splices past the end of revision 1 of b.txt.
        let outside = JournalRecord(kind: .write, path: "b.txt", revision: 2, content: Array("bee?\n".utf8))
            .asEdits([ByteSplice(start: 40, end: 41, text: Array("?".utf8))])
        let bytes = JournalFormat.header() + JournalFormat.encode(first) + JournalFormat.encode(orphan)
            + JournalFormat.encode(JournalRecord(kind: .write, path: "b.txt", revision: 1, content: Array("bee\n".utf8)))
            + JournalFormat.encode(outside)
        try TemporaryDirectory.writeFile(state.path + "/journal.log", bytes)
        let (_, recovery) = try EditJournal.open(directory: state.path, fsync: false)
        #expect(recovery.records.map(\.content) == [Array("one\n".utf8), Array("bee\n".utf8)], "each path as it was before its broken record")
        #expect(recovery.brokenChains.map(\.path) == ["a.txt", "b.txt"])
        #expect(recovery.brokenChains.first?.reason == "revision 2, which its edits change, is not in the journal")
        #expect(recovery.brokenChains.last?.reason == "its edits do not lie within revision 1")
        #expect(try FileContents.read(try #require(recovery.keptAs)) == bytes, "the journal as it was is kept")
    }
}

/// The journal remembers the change ids of the latest edits across saves, rewrites and restarts,
/// so that a retry after a crash is applied once (`ChangeIDsAcrossRestartsTests` for the buffers).
@Suite struct ChangeIDJournalTests {
    func record(_ path: String, _ revision: Int, _ text: String, id: UUID?) -> JournalRecord {
        JournalRecord(kind: .write, path: path, revision: revision, changeID: id, content: Array(text.utf8))
    }

    @Test func idsOfSavedAndUnsavedEditsSurviveAReopenAndACompaction() async throws {
        let state = try TemporaryDirectory()
        let (saved, unsaved, other) = (UUID(), UUID(), UUID())
        do {
            let (journal, _) = try EditJournal.open(directory: state.path, fsync: false)
            try await journal.append(record("a.txt", 1, "one", id: saved))
            try await journal.markSaved("a.txt", revision: 1)
            try await journal.append(record("a.txt", 1, "two", id: unsaved))
            try await journal.append(record("b.txt", 1, "bee", id: other))
        }
        let (journal, recovery) = try EditJournal.open(directory: state.path, fsync: false)
        #expect(await journal.changeIDs(of: "a.txt") == [saved, unsaved])
        #expect(await journal.changeIDs(of: "b.txt") == [other])
        #expect(recovery.records.map(\.path) == ["a.txt", "b.txt"], "ids are not records")
        // Past the compaction threshold, mostly obsolete: rewritten, ids kept.
        let large = String(repeating: "x", count: EditJournal.compactionThreshold)
        try await journal.append(record("c.txt", 1, large, id: nil))
        let before = await journal.byteCount
        try await journal.markSaved("c.txt", revision: 1)
        #expect(await journal.byteCount < before, "compacted")
        let (again, _) = try EditJournal.open(directory: state.path, fsync: false)
        #expect(await again.changeIDs(of: "a.txt") == [saved, unsaved])
    }

    /// A journal of format 2 (an agent before change ids) is read, and rewritten in this format
    /// before anything is appended to it: never a record it could not hold under its old header.
    @Test func aJournalOfTheFormatBeforeIsReadAndRewrittenInThisOne() async throws {
        let state = try TemporaryDirectory()
        let id = UUID()
        let older = Array("ASJ1".utf8) + [2, 0, 0, 0] + JournalFormat.encode(record("a.txt", 1, "one", id: id))
        try TemporaryDirectory.writeFile(state.path + "/journal.log", older)
        let (journal, recovery) = try EditJournal.open(directory: state.path, fsync: false)
        #expect(recovery.records == [record("a.txt", 1, "one", id: id)])
        #expect(await journal.changeIDs(of: "a.txt") == [id])
        #expect(Array(try FileContents.read(state.path + "/journal.log").prefix(8)) == JournalFormat.header())
        #expect(JournalFormat.version == 3)
    }

    @Test func onlyTheLatestIdsAreKept() async throws {
        let state = try TemporaryDirectory()
        let ids = (0..<(RecentChangeIDs.limit + 10)).map { _ in UUID() }
        do {
            let (journal, _) = try EditJournal.open(directory: state.path, fsync: false)
            for (index, id) in ids.enumerated() { try await journal.append(record("a.txt", index + 1, "\(index)", id: id)) }
        }
        let (journal, _) = try EditJournal.open(directory: state.path, fsync: false)
        #expect(await journal.changeIDs(of: "a.txt") == Array(ids.suffix(RecentChangeIDs.limit)))
    }

    /// An edit whose record comes after a newer one of its buffer is not written (the newer text
    /// holds it), but its id is.
    @Test func theIdOfAnEditOvertakenByANewerRecordIsKept() async throws {
        let state = try TemporaryDirectory()
        let (older, newer) = (UUID(), UUID())
        let source = UUID()
        do {
            let (journal, _) = try EditJournal.open(directory: state.path, fsync: false)
            var second = record("a.txt", 2, "two", id: newer)
            second.source = source
            var first = record("a.txt", 1, "one", id: older)
            first.source = source
            try await journal.append(second)
            try await journal.append(first)
        }
        let (journal, recovery) = try EditJournal.open(directory: state.path, fsync: false)
        #expect(recovery.records.map(\.revision) == [2])
        #expect(Set(await journal.changeIDs(of: "a.txt")) == [older, newer])
    }
}
