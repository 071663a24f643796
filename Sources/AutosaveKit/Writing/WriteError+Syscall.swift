import SystemPackage

extension WriteError {
    /// Makes one step of a save, its failure reported as `.system` naming `path` and `operation`
    /// as the user reads them (`fsync docs/notes.txt: Input/output error`).
    ///
    /// - Throws: `WriteError.system` with the step's `Errno`.
    static func step<Result>(_ operation: String, _ path: String, _ body: () throws(Errno) -> Result) throws(WriteError) -> Result {
        do { return try body() } catch { throw .system(path: path, operation: operation, error) }
    }
}
