/// Why `undo` could not run at all (a file it could not undo is named in its answer instead).
public enum UndoError: Error, Sendable, Equatable, CustomStringConvertible {
    /// `--who` is empty, or holds a comma or a space.
    case badWriter(String)

    public var description: String {
        switch self {
        case .badWriter(let text):
            "\"\(text)\" names no writer: give one as history names it (cli, nvim:41 or nvim, mcp:NAME, external, external:sed); nothing was undone"
        }
    }
}
