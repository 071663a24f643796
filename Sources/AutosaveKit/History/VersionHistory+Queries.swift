import AutosaveHistory
import FoundationEssentials

/// Which version of a file a client means: `PATH@V`.
public enum VersionSelector: Sendable, Equatable, CustomStringConvertible {
    /// A version id, as `autosave history` lists it.
    case id(Int64)
    /// N versions before the latest (`@-1` is what the file held before its last change; `@-0` the
    /// latest); conflict copies are not counted, as the file never held them.
    case back(Int)
    /// The version the file held at this moment (milliseconds since the Unix epoch): its latest
    /// version recorded at or before it, following moves. `parse(_:now:)` reads times as users type them.
    case time(Int64)

    /// Reads `V` of `PATH@V` as the socket carries it: a version id, or `-N` (a time comes as a
    /// number of its own, `at`).
    ///
    /// - Returns: nil when it is neither.
    public init?(_ text: some StringProtocol) {
        if text.first == "-", let count = Int(text.dropFirst()), count >= 0 {
            self = .back(count)
        } else if let id = Int64(text), id > 0 {
            self = .id(id)
        } else {
            return nil
        }
    }

    public var description: String {
        switch self {
        case .id(let id): "\(id)"
        case .back(let count): "-\(count)"
        case .time(let milliseconds): Self.localTimestamp(milliseconds)
        }
    }
}

/// Why a question to history has no answer.
public enum HistoryQueryError: Error, Sendable, Equatable, CustomStringConvertible {
    /// `history.enabled` is false, or the database could not be opened (the log says why).
    case off
    /// History has no version of the path (or of anything below it).
    case noVersions(path: String)
    /// The path has versions, but not this one.
    case noSuchVersion(path: String, selector: VersionSelector, count: Int)
    /// The path has versions, but none as early as `time`: the earliest is from `earliest` (both
    /// milliseconds since the epoch).
    case beforeFirstVersion(path: String, time: Int64, earliest: Int64)
    /// The database failed.
    case store(HistoryError)

    /// The error's `data.reason` on the socket.
    public var reason: String {
        switch self {
        case .off: "historyOff"
        case .noVersions: "noVersions"
        case .noSuchVersion, .beforeFirstVersion: "noSuchVersion"
        case .store: "historyFailed"
        }
    }

    public var description: String {
        switch self {
        case .off: "history is off (history.enabled is false, or its database could not be opened: see the agent's log)"
        case .noVersions(let path): "history has no version of \(path.isEmpty ? "any file" : path)"
        case .noSuchVersion(let path, let selector, let count):
            "\(path) has no version \(selector) (it has \(count): `autosave history \(path)` lists them)"
        case .beforeFirstVersion(let path, let time, let earliest):
            "\(path) has no version as early as \(VersionSelector.localTimestamp(time)): history's earliest version of it is from "
                + "\(VersionSelector.localTimestamp(earliest)) (`autosave history \(path)` lists them)"
        case .store(let error): "\(error)"
        }
    }
}

extension VersionHistory {
    /// The versions of `path`, newest first, following the file across moves; for a folder (a
    /// path with no versions of its own, "" for the root) those of every file below it.
    ///
    /// - Throws: `HistoryQueryError.noVersions` when there are none, `.store` when the database fails.
    public func versions(at path: String, limit: Int? = nil) async throws(HistoryQueryError) -> [Version] {
        try await versions(at: path, limit: limit, into: [Version]()) { $0.append($1) }
    }

    /// The versions `versions(at:limit:)` lists, folded into `initial` by `step` one by one on
    /// the database's thread as they are read: an answer's text is written from them with no
    /// list of 10,000 versions held (and copied as it grows) on the way.
    ///
    /// - Throws: `HistoryQueryError.noVersions` when there are none, `.store` when the database fails.
    public func versions<Output: Sendable>(
        at path: String, limit: Int? = nil, into initial: Output, _ step: @escaping @Sendable (inout Output, Version) -> Void
    ) async throws(HistoryQueryError) -> Output {
        let database = self.database
        let (output, count) = try await query { () throws(HistoryError) -> (Output, Int) in
            try database.withStore { store throws(HistoryError) in
                var output = initial
                var count = 0
                func take(_ version: Version) {
                    step(&output, version)
                    count += 1
                }
                if !path.isEmpty { try store.forEachVersion(of: path, limit: limit, take) }
                if count == 0 { try store.forEachVersion(below: path, limit: limit, take) }
                return (output, count)
            }
        }
        guard count > 0 else { throw .noVersions(path: path) }
        return output
    }

    /// Files at or below `folder` whose latest version is their removal: what can be brought back.
    public func deleted(below folder: String) async throws(HistoryQueryError) -> [Version] {
        let database = self.database
        return try await query { () throws(HistoryError) -> [Version] in
            try database.withStore { store throws(HistoryError) in try store.deleted(below: folder) }
        }
    }

    /// The version of `path` that `selector` names, and its bytes (nil: a removal, which has none).
    ///
    /// - Throws: `HistoryQueryError.noVersions`, `.noSuchVersion`, `.store`.
    public func content(of path: String, at selector: VersionSelector) async throws(HistoryQueryError) -> (version: Version, content: [UInt8]?) {
        let database = self.database
        let answer = try await query {
            () throws(HistoryError) -> (versions: Int, earliest: Int64?, found: (Version, [UInt8]?)?) in
            try database.withStore { store throws(HistoryError) in
                // The one version, found by the index: listing 10,000 versions to pick one cost
                // most of a `show`. `-N` and a time count what the file held: a conflict copy
                // never was, and is named by its id only (the store's `version(of:back:)` and
                // `version(of:atOrBefore:)` skip copies).
                let chosen: Version?
                switch selector {
                case .id(let id): chosen = try store.version(of: path, id: id)
                case .back(let count): chosen = try store.version(of: path, back: count)
                case .time(let moment): chosen = try store.version(of: path, atOrBefore: moment)
                }
                // The count matters only when none is found.
                if let chosen { return (1, nil, (chosen, try store.content(of: chosen.id))) }
                // None: the list, only to say why (how many there are, how early the first is).
                let versions = try store.versions(of: path)
                return (versions.count, versions.map(\.time).min(), nil)
            }
        }
        guard answer.versions > 0 else { throw .noVersions(path: path) }
        guard let (version, content) = answer.found else {
            if case .time(let moment) = selector, let earliest = answer.earliest {
                throw .beforeFirstVersion(path: path, time: moment, earliest: earliest)
            }
            throw .noSuchVersion(path: path, selector: selector, count: answer.versions)
        }
        return (version, content)
    }

    func query<Result: Sendable>(_ body: @escaping @Sendable () throws(HistoryError) -> Result) async throws(HistoryQueryError) -> Result {
        // Everything handed over before is written first, so a client sees its own save; and a
        // database that could not be opened is history off (the log says why).
        await caughtUp()
        guard database.isOpen else { throw .off }
        do throws(HistoryError) { return try await BlockingIO.run(body) } catch { throw .store(error) }
    }
}

extension Version {
    /// When it was recorded, as RFC 3339 in UTC with milliseconds (`2026-11-27T10:00:00.123Z`).
    public var timestamp: String {
        var text = TextBytes()
        text.appendTimestamp(time)
        return String(decoding: text.bytes, as: UTF8.self)
    }
}
