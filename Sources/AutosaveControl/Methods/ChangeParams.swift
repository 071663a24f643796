import AutosaveKit
import FoundationEssentials

/// The params a change (`write`, `edit`, `remove`, `patch`) may carry besides its own: a change id
/// that makes a retry safe, the revision it was made on, and the client's name for `edited` events.
public struct ChangeParams: Sendable, Equatable {
    /// `changeId`: a change with the same id is applied once.
    public var changeID: UUID?
    /// `ifRevision`: refuse (`staleRevision`) unless the buffer is at this revision.
    public var ifRevision: Int?
    /// `client`: the name the change carries in `edited` events (`client` when not given).
    public var client: String?

    public init(changeID: UUID? = nil, ifRevision: Int? = nil, client: String? = nil) {
        self.changeID = changeID
        self.ifRevision = ifRevision
        self.client = client
    }

    /// The name the change is announced with.
    public var clientName: String { client ?? "client" }

    var members: [JSONMember] {
        var members: [JSONMember] = []
        if let changeID { members.append(member("changeId", .string(changeID.uuidString))) }
        if let ifRevision { members.append(member("ifRevision", .number(String(ifRevision)))) }
        if let client { members.append(member("client", .string(client))) }
        return members
    }
}
