@testable import AutosaveKit
import AutosaveTestKit
import ByteNames
import Foundation
import Glibc
import PropertyBased
import Testing

/// Randomized trees of folders, files and symbolic links (relative and absolute; to files and
/// folders inside, outside, into `.git/` and the state directory; dangling, chained, looping),
/// resolved by `PathResolver` and checked against the real kernel.
///
/// The class of bug: *a path that leads a read or a write outside the walls*. Its property: whatever
/// the tree and the path, a place the resolver hands back is a folder the kernel says lies beneath
/// the root and outside `.git/` and the state directory, and the file there is not a link. And so
/// that the walls are not bought by refusing everything: in a tree whose links all stay inside, a
/// path the kernel resolves to a file is resolved to that very file.
@Suite struct PathResolverPropertyTests {
    static let folders = ["a", "a/b", "c", ".git", ".git/hooks", ".autosave", ".autosave/journal"]
    static let files = ["top.txt", "a/f.txt", "a/b/g.txt", "c/h.txt", ".git/config", ".autosave/agent.lock"]
    static let linkPlaces = ["", "a", "a/b", "c"]
    static let linkNames = ["l1", "l2", "l3"]
    /// Components a path is drawn from.
    static let components = [
        "a", "b", "c", "l1", "l2", "l3", "..", ".", "f.txt", "g.txt", "h.txt", "top.txt", "new.txt", ".git", "config",
        ".autosave", "journal", "hooks",
    ]

    /// Where benign links lead, relative to the root (a link names it relative to its own folder
    /// or absolutely): files and folders inside, and names that do not exist yet.
    static let insideDestinations = ["c", "a/b/g.txt", "a/f.txt", "c/h.txt", "a/b", "top.txt", "a", "missing/x", "new.txt", "c/new.txt"]
    /// Where hostile links lead, relative to the root: into `.git/` and the state directory, and
    /// (`{outside}`) beside the root.
    static let protectedDestinations = [
        ".git/config", ".git", ".git/hooks/pre-commit", ".autosave/agent.lock", ".autosave", ".autosave/journal",
        "{outside}/secret.txt", "{outside}",
    ]
    /// Targets written as they are: `{root}` and `{outside}` stand for the absolute folders.
    static let rawHostileTargets = [
        "/etc", "..", "../../../..", ".", "l1", "l2", "../l1", "{root}/../outside/secret.txt", "{root}", "{outside}/secret.txt",
        "../a/../../outside",
    ]

    struct Draw {
        var random: Xoshiro
        mutating func below(_ bound: Int) -> Int { Int(random.next() % UInt64(bound)) }
        mutating func pick<T>(_ items: [T]) -> T { items[below(items.count)] }
    }

    /// One random tree: the project at `base/root`, an outside folder beside it.
    struct Tree {
        let base: TemporaryDirectory
        let root: String
        let outside: String
        var links: [(path: String, target: String)] = []

        init(_ draw: inout Draw, hostile: Bool) throws {
            base = try TemporaryDirectory(prefix: "resolver-property")
            root = base.path + "/root"
            outside = base.path + "/outside"
            for folder in PathResolverPropertyTests.folders { mkdir(root + "/" + folder, 0o755) }
            for file in PathResolverPropertyTests.files { try base.write("root/" + file, "inside \(file)\n") }
            try base.write("outside/secret.txt", "OUTSIDE\n")
            for _ in 0..<(1 + draw.below(6)) {
                let place = draw.pick(PathResolverPropertyTests.linkPlaces)
                let path = (place.isEmpty ? "" : place + "/") + draw.pick(PathResolverPropertyTests.linkNames)
                let destinations = PathResolverPropertyTests.insideDestinations
                    + (hostile ? PathResolverPropertyTests.protectedDestinations : [])
                var target: String
                if hostile, draw.below(4) == 0 {
                    target = draw.pick(PathResolverPropertyTests.rawHostileTargets)
                } else {
                    let destination = draw.pick(destinations)
                    let up = String(repeating: "../", count: place.pathComponents.count)
                    target = destination.hasPrefix("{outside}")
                        ? (draw.below(2) == 0 ? destination : up + "../" + destination.dropFirst("{outside}/".count))
                        : (draw.below(3) == 0 ? "{root}/" + destination : up + destination)
                }
                target = target.replacingOccurrences(of: "{root}", with: root).replacingOccurrences(of: "{outside}", with: outside)
                if symlink(target, root + "/" + path) == 0 { links.append((path, target)) }
            }
        }

        func path(_ draw: inout Draw, benign: Bool) -> String {
            let pool = benign
                ? PathResolverPropertyTests.components.filter { ![".git", ".autosave", ".."].contains($0) }
                : PathResolverPropertyTests.components
            return (0...draw.below(4)).map { _ in draw.pick(pool) }.joined(separator: "/")
        }
    }

    /// Where an open descriptor's folder is, as the kernel says.
    static func physicalPath(of descriptor: CInt) -> String {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = readlink("/proc/self/fd/\(descriptor)", &buffer, buffer.count - 1)
        return count < 0 ? "?" : String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Checks one resolution against the walls; returns what went wrong, or nil.
    static func wallsBreach(_ resolution: PathResolver.Resolution, tree: Tree) -> String? {
        guard let location = resolution.location else { return nil }
        let folder = physicalPath(of: location.folder)
        guard let relative = folder.isSameName(as: tree.root) ? "" : folder.pathBelow(tree.root) else {
            return "its folder \(folder) is outside the root"
        }
        let components = relative.pathComponents + [location.name]
        if components.contains(".git") { return "it lands in .git: \(relative)/\(location.name)" }
        if components.first == ".autosave" { return "it lands in the state directory: \(relative)/\(location.name)" }
        if !location.path.isSameName(as: components.joined(separator: "/")) {
            return "its path \(location.path) is not where its folder is (\(relative))"
        }
        var status = stat()
        if fstatat(location.folder, location.name, &status, AT_SYMLINK_NOFOLLOW) == 0, status.st_mode & S_IFMT == S_IFLNK {
            return "the file it hands back is a link"
        }
        return nil
    }

    static func run(cases: Int, hostile: Bool, kernel: Bool, seed: (UInt64, UInt64, UInt64, UInt64)) throws -> (resolved: Int, refused: Int) {
        var draw = Draw(random: Xoshiro(seed: seed))
        var counts = (resolved: 0, refused: 0)
        for index in 0..<cases {
            var tree = try Tree(&draw, hostile: hostile)
            let resolver = PathResolver(root: tree.root, stateDirectory: ".autosave", usesKernelResolution: kernel)
            for _ in 0..<24 {
                let path = tree.path(&draw, benign: !hostile)
                let context = "case \(index), path \(path), links \(tree.links)"
                do {
                    let resolution = try resolver.resolve(path)
                    counts.resolved += 1
                    if let breach = wallsBreach(resolution, tree: tree) { Issue.record("\(breach): \(context)") }
                    // The kernel's own resolution of the same path, where it finds a file: the same file.
                    var kernel = stat()
                    guard stat(tree.root + "/" + path, &kernel) == 0, kernel.st_mode & S_IFMT != S_IFDIR else { continue }
                    var ours = stat()
                    guard let location = resolution.location, fstatat(location.folder, location.name, &ours, 0) == 0 else {
                        if !hostile { Issue.record("the kernel finds a file the resolver does not: \(context)") }
                        continue
                    }
                    if ours.st_ino != kernel.st_ino || ours.st_dev != kernel.st_dev {
                        Issue.record("the resolver found another file than the kernel: \(context)")
                    }
                } catch {
                    counts.refused += 1
                    if !hostile {
                        switch error {
                        case .notAFolder, .malformed: break
                        default: Issue.record("a tree whose links all stay inside refused \(error): \(context)")
                        }
                    }
                }
            }
            tree.links.removeAll()
        }
        return counts
    }

    @Test(arguments: [true, false])
    func noResolutionLeadsOutsideTheWalls(kernelResolution: Bool) throws {
        let cases = ProcessInfo.processInfo.environment["AUTOSAVE_PROPERTY_CASES"].flatMap(Int.init) ?? 150
        let counts = try Self.run(cases: cases, hostile: true, kernel: kernelResolution, seed: (0x7761_6C6C, 0x7321_686F, 0x6C64_2121, 0x6B65_726E))
        // The draw reaches both answers often enough to mean something.
        #expect(counts.resolved > cases * 3 && counts.refused > cases * 3, "\(counts)")
    }

    @Test(arguments: [true, false])
    func linksThatStayInsideAreFollowedAsTheKernelFollowsThem(kernelResolution: Bool) throws {
        let cases = ProcessInfo.processInfo.environment["AUTOSAVE_PROPERTY_CASES"].flatMap(Int.init) ?? 100
        let counts = try Self.run(cases: cases, hostile: false, kernel: kernelResolution, seed: (0x696E_7369, 0x6465_2121, 0x666F_6C6C, 0x6F77_2121))
        #expect(counts.resolved > cases * 10, "\(counts)")
    }

    /// Fresh seeds each run, for a longer search: `AUTOSAVE_PROPERTY_CASES=2000`.
    @Test func noResolutionLeadsOutsideTheWallsFromRandomSeeds() async {
        await propertyCheck(count: 4, input: Gen.uint64(in: 0...UInt64.max)) { seed in
            do {
                _ = try Self.run(cases: 20, hostile: true, kernel: seed % 2 == 0, seed: (seed, seed ^ 0x5A5A, seed &* 31, 7))
            } catch {
                Issue.record("the tree could not be made: \(error)")
            }
        }
    }
}
