import AutosaveHistory

/// Which writer `autosave undo --who` means, matched against the `who` history records.
///
/// `nvim:41` is that one process; `nvim` (no `:`) every `nvim:PID`; `mcp:claude` that client and
/// each of its sessions (`mcp:claude#3`); `external` every outside change; `external:sed` the
/// outside changes whose writer the agent saw was `sed`. A save that holds several clients'
/// edits (`cli,nvim:41`) is the writer's only when every one of them matches: undoing it would
/// take back the others' edits too.
public struct WriterPattern: Sendable, Equatable, CustomStringConvertible {
    public let text: String

    /// - Throws: `UndoError.badWriter` for an empty name, or one with a comma.
    public init(_ text: String) throws(UndoError) {
        guard !text.isEmpty, !text.contains(","), !text.contains(where: \.isWhitespace) else {
            throw .badWriter(text)
        }
        self.text = text
    }

    public var description: String { text }

    /// Whether `version` was written by this writer alone.
    public func matches(_ version: Version) -> Bool {
        let writers = version.who.split(separator: ",").map(String.init)
        return !writers.isEmpty && writers.allSatisfy { matches(writer: $0, program: version.program) }
    }

    /// Whether `version` names this writer among others (a save of several clients' edits).
    public func isAmong(_ version: Version) -> Bool {
        let writers = version.who.split(separator: ",").map(String.init)
        return writers.contains { matches(writer: $0, program: version.program) } && !matches(version)
    }

    /// Compared as bytes, as names are here: a program's name is whatever bytes `/proc` gave.
    private func matches(writer: String, program: String?) -> Bool {
        let pattern = Array(text.utf8)
        let external = Array("external:".utf8)
        if pattern.starts(with: external) {
            return writer.utf8.elementsEqual("external".utf8) && program.map { Array($0.utf8) == Array(pattern.dropFirst(external.count)) } == true
        }
        if writer.utf8.elementsEqual(pattern) { return true }
        // `nvim` for every `nvim:PID`; `mcp:claude` for each session `mcp:claude#N`.
        let separator = pattern.contains(UInt8(ascii: ":")) ? UInt8(ascii: "#") : UInt8(ascii: ":")
        return writer.utf8.starts(with: pattern + [separator])
    }
}
