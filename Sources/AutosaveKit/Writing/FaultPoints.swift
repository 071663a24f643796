/// Places where a test steps into a save: fault-injection seams, never set by the agent.
///
/// A test holds a save in flight, changes the file under it, or plants something where its temp
/// file will go, to check that the save still loses nothing. Reached only through
/// `@_spi(Testing) import AutosaveKit`, so a library user sees only what the product offers.
@_spi(Testing) public struct FaultPoints: Sendable {
    /// Runs right before the compare-and-swap, with the path being saved.
    public var beforeCommit: (@Sendable (String) -> Void)?
    /// Runs after the compare-and-swap, right before the rename, with the path being saved.
    public var beforeRename: (@Sendable (String) -> Void)?
    /// Picks the temp file's name from the target's name (random in the agent).
    public var tempName: (@Sendable (String) -> String)?
    /// Runs on history's baseline thread after it read a file and before it records it, with the path.
    public var afterBaselineRead: (@Sendable (String) -> Void)?

    public init(
        beforeCommit: (@Sendable (String) -> Void)? = nil, beforeRename: (@Sendable (String) -> Void)? = nil,
        tempName: (@Sendable (String) -> String)? = nil, afterBaselineRead: (@Sendable (String) -> Void)? = nil
    ) {
        self.beforeCommit = beforeCommit
        self.beforeRename = beforeRename
        self.tempName = tempName
        self.afterBaselineRead = afterBaselineRead
    }
}
