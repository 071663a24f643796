import SystemPackage

extension Location {
    /// The file's folder as a swift-system descriptor, borrowed: the location closes it when it
    /// goes, so its users never do.
    var descriptor: FileDescriptor { FileDescriptor(rawValue: folder) }
}
