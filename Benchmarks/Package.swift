// swift-tools-version: 6.1
// In-process benchmarks of AutosaveKit, with ordo-one's package-benchmark.
// Build: swift build --package-path Benchmarks          (what CI does; never timed there)
// Run:   cd Benchmarks && swift package --disable-sandbox benchmark   (see README.md)
import PackageDescription

let package = Package(
    name: "AutosaveBenchmarks",
    dependencies: [
        .package(name: "autosave", path: ".."),
        // Only MallocInterposer (for mallocCountTotal): the default traits add RuntimeInterposer,
        // which fetches swift-runtime-interposer for ARC metrics that these benchmarks do not use.
        .package(url: "https://github.com/ordo-one/benchmark", exact: "1.38.1", traits: ["MallocInterposer"]),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.0"),
    ],
    targets: [
        .executableTarget(
            name: "AutosaveBenchmarks",
            dependencies: [
                .product(name: "AutosaveKit", package: "autosave"),
                .product(name: "Inotify", package: "autosave"),
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Benchmarks/AutosaveBenchmarks",
            swiftSettings: [
                .enableUpcomingFeature("ExistentialAny"),
                .enableUpcomingFeature("MemberImportVisibility"),
                .unsafeFlags(["-warnings-as-errors"]),
            ],
            plugins: [
                .plugin(name: "BenchmarkPlugin", package: "benchmark")
            ]
        )
    ]
)
