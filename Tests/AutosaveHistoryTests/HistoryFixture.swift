import AutosaveTestKit
import Foundation
import Testing

@testable import AutosaveHistory

/// A history database in a real temporary directory, and ways to look at it from outside.
struct HistoryFixture {
    let directory: TemporaryDirectory
    /// The database file's path.
    let path: String

    init(name: String = "history.sqlite") throws {
        directory = try TemporaryDirectory(prefix: "autosave-history")
        path = directory.url(name)
    }

    /// A store on the fixture's file.
    func open(keyframeInterval: Int = 64) throws(HistoryError) -> VersionStore {
        try VersionStore(path: path, keyframeInterval: keyframeInterval)
    }

    /// The first column of the first row `sql` returns, read through a second connection, as a
    /// program looking at the file would.
    func integer(_ sql: String) throws -> Int64 {
        let database = try SQLiteDatabase(path: path)
        return try database.prepare(sql).firstRow { (row: SQLiteStatement) throws(SQLiteError) in row.int64(at: 0) }
            ?? 0
    }

    /// The first column of every row `sql` returns, as text, through a second connection.
    func texts(_ sql: String) throws -> [String] {
        let database = try SQLiteDatabase(path: path)
        return try database.prepare(sql).rows { (row: SQLiteStatement) throws(SQLiteError) in row.text(at: 0) }
    }
}

/// A version to record with the fields a test rarely cares about filled in.
func input(
    _ path: String, _ content: String?, _ kind: VersionKind = .saved, who: String = "cli", time: Int64 = 1_000,
    from: String? = nil
) -> VersionInput {
    VersionInput(path: path, content: content.map { Array($0.utf8) }, kind: kind, who: who, time: time, from: from)
}

/// Text of `lines` lines of 64 bytes each (63 and a newline), made of words from a seeded
/// generator: compressible as prose is, and every line different.
func text(lines: Int, seed: UInt64) -> [UInt8] {
    var random = SplitMix64(seed: seed)
    var bytes: [UInt8] = []
    bytes.reserveCapacity(lines * 64)
    for number in 0..<lines {
        bytes += line(number, &random)
    }
    return bytes
}

/// One 64-byte line: its number, then words, then a newline.
func line(_ number: Int, _ random: inout SplitMix64) -> [UInt8] {
    let words = [
        "save", "file", "buffer", "edit", "version", "history", "restore", "agent", "merge", "watch", "disk",
        "journal", "the", "a", "of", "and", "keeps", "every", "change", "writer",
    ]
    var line = Array(String(number).utf8) + [UInt8(ascii: ":")]
    while line.count < 63 {
        line += [UInt8(ascii: " ")] + Array(words[random.below(words.count)].utf8)
    }
    return Array(line.prefix(63)) + [UInt8(ascii: "\n")]
}

/// `count` bytes from a seeded generator, NULs and all.
func randomBytes(_ count: Int, seed: UInt64) -> [UInt8] {
    var random = SplitMix64(seed: seed)
    return (0..<count).map { _ in UInt8(truncatingIfNeeded: random.next()) }
}

/// Runs `body` and returns the `HistoryError` it throws; records an issue when it throws nothing
/// or something else.
func historyError(
    _ body: () throws(HistoryError) -> Void, sourceLocation: SourceLocation = #_sourceLocation
) -> HistoryError? {
    do {
        try body()
        Issue.record("expected a HistoryError, but nothing was thrown", sourceLocation: sourceLocation)
        return nil
    } catch {
        return error
    }
}

/// The whole file at `path`.
func readFile(_ path: String) throws -> [UInt8] {
    guard let data = FileManager.default.contents(atPath: path) else {
        throw CocoaError(.fileReadNoSuchFile, userInfo: [NSFilePathErrorKey: path])
    }
    return Array(data)
}
