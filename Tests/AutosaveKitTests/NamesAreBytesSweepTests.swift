import Foundation
import Testing

/// File names are bytes; Swift's `String ==`, `hasPrefix`, hashing and `split(separator:)` work on
/// canonical equivalence and grapheme clusters. NFC `café.txt` and NFD `cafe\u{301}.txt` are two
/// files to Linux and were one to the agent (a `cat` of one printed the other); `/` followed by
/// a combining mark is one `Character`, so a `split(separator: "/")` kept `.git/\u{301}x` whole
/// and a `.git` check never saw `.git`.
///
/// The class of bug: *a name compared as text*. This sweep reads every source file of the agent
/// and fails on the constructions that compare or key names as text — a `String`-keyed map or
/// set, `hasPrefix`/`hasSuffix`, splitting at a `/` character, `==`/`!=` between names — except
/// where `allowed` says why that one is not a file's name. Names go through `ByteNames`
/// (`PathKey`, `PathMap`, `PathSet`, `isSameName`, `isPath(inside:)`, `pathComponents`).
@Suite struct NamesAreBytesSweepTests {
    /// Constructions that treat a name as text.
    static let suspects: [(label: String, pattern: String)] = [
        ("a String-keyed map or set", #"\[(String|Substring) ?:|Dictionary<(String|Substring)|Set<(String|Substring)>"#),
        ("a prefix or suffix compared as text", #"\.has(Prefix|Suffix)\("#),
        ("a path split at a / Character", #"split\(separator: "/"|(last|first)Index\(of: "/"\)|components\(separatedBy: "/"\)"#),
        (
            "a name compared with == or !=",
            #"(?i)\b[\w.$]*(path|name|directory|folder|root|key)\??\s*(==|!=)\s*(?!nil\b)[a-z_$][\w.$\[\]]*|\b[a-z_$][\w.$\[\]]*\s*(==|!=)\s*(?=[a-z_$])[\w.$]*(path|name|directory|folder|root|key)\b"#
        ),
    ]

    /// Lines that match a suspect but hold no file's name: (file, text on the line, why).
    static let allowed: [(file: String, line: String, reason: String)] = [
        ("AutosaveTestKit/LogCapture.swift", "public var fields: [String: String]", "log fields, keyed by field name"),
        ("AutosaveTestKit/LogCapture.swift", "var fields: [String: String] = [:]", "log fields, keyed by field name"),
        ("AutosaveKit/Config/JSONReader.swift", "var keys: Set<String>? = nil", "JSON object keys"),
        ("AutosaveKit/Config/JSONReader.swift", "seen: inout Set<String>?", "JSON object keys"),
        ("AutosaveKit/Config/JSONReader.swift", "members.contains { $0.key == key }", "JSON object keys"),
        ("AutosaveKit/Buffers/OrphanedEdits.swift", "environment: [String: String]", "environment variables"),
        ("AutosaveKit/Agent/SocketLocation.swift", "environment: [String: String]", "environment variables"),
        ("AutosaveKit/FileSystem/OpenWriters.swift", #"line.hasPrefix("flags:")"#, "a line of /proc/PID/fdinfo"),
        ("AutosaveKit/Writing/AtomicWriter.swift", #"line.hasPrefix("Umask:")"#, "a line of /proc/self/status"),
        ("AutosaveKit/Config/Configuration+Decoding.swift", #"$0.hasPrefix(section + ".")"#, "configuration keys"),
        ("AutosaveKit/Config/Configuration+Decoding.swift", "$0.path == path", "configuration key paths (`watch.settleMs`)"),
        ("AutosaveKit/Config/Configuration+Decoding.swift", "$0.key == part", "JSON object keys"),
        ("AutosaveKit/Config/JSONValue+Access.swift", "$0.key == key", "JSON object keys"),
        ("AutosaveControl/RPCParams.swift", "$0.key == key", "JSON object keys"),
        ("AutosaveControl/ControlFrame.swift", "$0.key == announcer.rawValue", "JSON object keys"),
        ("AutosaveKit/Patching/UnifiedDiff.swift", #"parts[3].hasPrefix("@@")"#, "a hunk header's fields"),
        ("AutosaveMCP/ChangeLog.swift", "client != ownName", "the MCP client's name, not a file's"),
        ("Inotify/FileNames.swift", "first == longName", "a length byte against its marker"),
        ("Inotify/FileNames.swift", "length == name.count", "lengths in bytes"),
        ("AutosaveHistory/SQLite/SQLiteDatabase.swift", "var cache: [String: SQLiteStatement]", "SQL statements, keyed by their text"),
        ("AutosaveKit/History/VersionSelector+Parsing.swift", "static let units: [String: Int64]", "time units a user types (`minutes`, `h`)"),
        ("AutosaveKit/History/VersionSelector+Parsing.swift", "var units: [String: Int64]", "time units a user types, as the table is built"),
        ("AutosaveKit/History/VersionSelector+Parsing.swift", #"rest.hasSuffix("ago")"#, "the word `ago` in a time a user types"),
        // A glob matches Unicode scalars, never `Character`s: for the UTF-8 names the agent tracks,
        // scalars and bytes are one to one, so no two spellings of a name ever match alike.
        ("AutosaveKit/Changes/PathGlob.swift", #"text.hasSuffix("/")"#, "a folder's trailing `/` in a glob's subject, not a name"),
        ("AutosaveKit/Changes/PathGlob.swift", #"trimmed.split(separator: "/""#, "a glob's segments, as Unicode scalars"),
        ("AutosaveKit/Changes/PathGlob.swift", #"Array(text.unicodeScalars).split(separator: "/""#, "a path as Unicode scalars (bytes one to one)"),
        ("AutosaveKit/Changes/PathGlob.swift", "pattern[p] == name[n]", "Unicode scalars (bytes one to one), not Characters"),
        ("autosave/Autosave.swift", #"$0.hasPrefix("-") && $0 != "--start""#, "command-line options, not names"),
    ]

    /// The agent's sources, each with its path below `Sources/`; `ByteNames` itself is where
    /// names are compared as bytes, so it is not swept.
    static func sources() throws -> [(file: String, lines: [String])] {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Sources").path
        let files = try FileManager.default.subpathsOfDirectory(atPath: root).filter {
            $0.hasSuffix(".swift") && !$0.hasPrefix("ByteNames/")
        }
        return try files.sorted().map { file in
            (file, try String(contentsOfFile: root + "/" + file, encoding: .utf8).components(separatedBy: "\n"))
        }
    }

    @Test func noNameIsComparedOrKeyedAsText() throws {
        let sources = try Self.sources()
        #expect(sources.count > 100, "the sweep reads the sources (\(sources.count) files)")
        var used = Set<Int>()
        for (label, pattern) in Self.suspects {
            let expression = try NSRegularExpression(pattern: pattern)
            for (file, lines) in sources {
                for (number, line) in lines.enumerated() {
                    let code = line.trimmingCharacters(in: .whitespaces)
                    if code.hasPrefix("//") { continue }
                    let range = NSRange(code.startIndex..., in: code)
                    guard expression.firstMatch(in: code, range: range) != nil else { continue }
                    if let index = Self.allowed.firstIndex(where: { file == $0.file && code.contains($0.line) }) {
                        used.insert(index)
                        continue
                    }
                    Issue.record("\(file):\(number + 1): \(label): \(code) (compare names as bytes with ByteNames, or add it to `allowed` with the reason it is not a name)")
                }
            }
        }
        for (index, entry) in Self.allowed.enumerated() where !used.contains(index) {
            Issue.record("`allowed` names a line that is gone: \(entry.file): \(entry.line)")
        }
    }

    /// The sweep itself finds each construction it is for.
    @Test func theSweepCatchesEachConstruction() throws {
        let samples = [
            "var buffers: [String: FileBuffer] = [:]", "let seen = Set<String>()", #"if path.hasPrefix(root + "/") {"#,
            #"for part in path.split(separator: "/") {"#, "if change.path == key {", "guard source != name else {",
        ]
        for sample in samples {
            let caught = try Self.suspects.contains { _, pattern in
                try NSRegularExpression(pattern: pattern).firstMatch(in: sample, range: NSRange(sample.startIndex..., in: sample)) != nil
            }
            #expect(caught, "\(sample)")
        }
    }
}
