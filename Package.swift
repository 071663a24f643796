// swift-tools-version: 6.2
import PackageDescription

let package = Package(
    name: "autosave",
    products: [
        .executable(name: "autosave", targets: ["autosave"]),
        .library(name: "AutosaveKit", targets: ["AutosaveKit"]),
        .library(name: "AutosaveControl", targets: ["AutosaveControl"]),
        .library(name: "Inotify", targets: ["Inotify"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.0"),
        .package(url: "https://github.com/apple/swift-system.git", from: "1.8.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/x-sheep/swift-property-based.git", from: "2.0.1"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.0"),
        .package(url: "https://github.com/apple/swift-collections.git", from: "1.1.0"),
    ],
    targets: [
        .systemLibrary(
            name: "CInotifyTools",
            providers: [.apt(["libinotifytools0-dev"])]
        ),
        .systemLibrary(
            name: "CZlib",
            providers: [.apt(["zlib1g-dev"])]
        ),
        .systemLibrary(
            name: "CSQLite",
            providers: [.apt(["libsqlite3-dev"])]
        ),
        .systemLibrary(
            name: "CZstd",
            providers: [.apt(["libzstd-dev"])]
        ),
        .target(name: "CAutosaveShims"),
        .target(name: "ByteNames"),
        .target(
            name: "Inotify",
            dependencies: [
                "ByteNames",
                "CInotifyTools",
                .product(name: "SystemPackage", package: "swift-system"),
            ]
        ),
        .target(
            name: "AutosaveHistory",
            dependencies: ["CSQLite", "CZstd"]
        ),
        .target(
            name: "AutosaveKit",
            dependencies: [
                "AutosaveHistory",
                "ByteNames",
                "Inotify",
                "CAutosaveShims",
                "CZlib",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "SystemPackage", package: "swift-system"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "HeapModule", package: "swift-collections"),
            ]
        ),
        .target(
            name: "AutosaveControl",
            dependencies: [
                "AutosaveKit",
                "AutosaveHistory",
                "ByteNames",
                "CAutosaveShims",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "SystemPackage", package: "swift-system"),
            ]
        ),
        .target(
            name: "AutosaveMCP",
            dependencies: [
                "AutosaveKit",
                "ByteNames",
                "AutosaveControl",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .executableTarget(
            name: "autosave",
            dependencies: [
                "AutosaveKit",
                "AutosaveHistory",
                "ByteNames",
                "AutosaveControl",
                "AutosaveMCP",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ]
        ),
        .target(
            name: "AutosaveTestKit",
            dependencies: [
                "AutosaveKit",
                "ByteNames",
                "CAutosaveShims",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(
            name: "InotifyTests",
            dependencies: [
                "Inotify", "AutosaveTestKit", .product(name: "PropertyBased", package: "swift-property-based"),
            ]
        ),
        .testTarget(
            name: "AutosaveKitTests",
            dependencies: [
                "AutosaveKit", "AutosaveTestKit", "ByteNames", "Inotify",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "SystemPackage", package: "swift-system"),
                .product(name: "PropertyBased", package: "swift-property-based"),
            ]
        ),
        .testTarget(
            name: "AutosaveControlTests",
            dependencies: [
                "AutosaveControl", "AutosaveKit",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "PropertyBased", package: "swift-property-based"),
            ]
        ),
        .testTarget(name: "AutosaveHistoryTests", dependencies: ["AutosaveHistory", "AutosaveKit", "AutosaveTestKit"]),
        .testTarget(name: "EndToEndTests", dependencies: ["AutosaveTestKit"]),
        .testTarget(name: "AutosaveMCPTests", dependencies: ["AutosaveMCP", "AutosaveKit", "AutosaveTestKit"]),
    ]
)

// One place for the language mode and the habits every target shares.
for target in package.targets where target.type != .system && !target.name.hasPrefix("C") {
    target.swiftSettings =
        (target.swiftSettings ?? []) + [
            .enableUpcomingFeature("ExistentialAny"),
            .enableUpcomingFeature("MemberImportVisibility"),
            .treatAllWarnings(as: .error),
        ]
}
