// swift-tools-version: 6.2
// The fuzz targets: libFuzzer harnesses for the configuration parser, the control-socket
// request decoder, the three-way line merge, the patch reader, ranged edits and the buffer's state
// machine. Build and run them with `Fuzz/run [SECONDS]`:
// it adds the address sanitizer, libFuzzer's coverage instrumentation and libFuzzer itself,
// without which a plain `swift build` of this package does not link.
import PackageDescription

let package = Package(
    name: "autosave-fuzz",
    dependencies: [
        // `name:` keeps the dependency's identity "autosave" whatever the checkout's folder is called.
        .package(name: "autosave", path: ".."),
        // The same SwiftNIO the agent builds with: the stream goes through `ByteBuffer` as on the socket.
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.0"),
    ],
    targets: [
        .target(name: "CLibFuzzer"),
        .executableTarget(
            name: "FuzzConfiguration",
            dependencies: ["CLibFuzzer", .product(name: "AutosaveKit", package: "autosave")]
        ),
        .executableTarget(
            name: "FuzzRequestDecoder",
            dependencies: [
                "CLibFuzzer",
                .product(name: "AutosaveKit", package: "autosave"),
                .product(name: "AutosaveControl", package: "autosave"),
                .product(name: "NIOCore", package: "swift-nio"),
            ]
        ),
        .executableTarget(
            name: "FuzzPatch",
            dependencies: ["CLibFuzzer", .product(name: "AutosaveKit", package: "autosave")]
        ),
        .executableTarget(
            name: "FuzzEdits",
            dependencies: ["CLibFuzzer", .product(name: "AutosaveKit", package: "autosave")]
        ),
        .executableTarget(
            name: "FuzzLineMerge",
            dependencies: ["CLibFuzzer", .product(name: "AutosaveKit", package: "autosave")]
        ),
        .executableTarget(
            name: "FuzzBufferStateMachine",
            dependencies: ["CLibFuzzer", .product(name: "AutosaveKit", package: "autosave")]
        ),
    ]
)

for target in package.targets where target.name != "CLibFuzzer" {
    target.swiftSettings =
        (target.swiftSettings ?? []) + [
            .enableUpcomingFeature("ExistentialAny"),
            .enableUpcomingFeature("MemberImportVisibility"),
            .treatAllWarnings(as: .error),
        ]
}
