import AutosaveKit
import AutosaveTestKit
import Foundation
import Logging
import Testing

/// Where the control socket may be bound (issue 32, part 3): only in a directory its user alone can
/// enter, checked on real directories; a place passed over is logged with its reason.
@Suite struct SocketLocationTests {
    /// A state directory path too long for `<stateDir>/agent.sock` to fit in `sun_path`.
    static func longStateDirectory(in base: TemporaryDirectory) throws -> String {
        let state = base.url(String(repeating: "a-long-directory-name/", count: 5) + ".autosave")
        try FileManager.default.createDirectory(atPath: state, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        return state
    }

    /// A stand-in for `/tmp`: world-writable and sticky.
    static func stickyTemporary(in base: TemporaryDirectory) throws -> String {
        try base.makeDirectory("tmp")
        chmod(base.url("tmp"), 0o1777)
        return base.url("tmp")
    }

    static func problem(_ path: String) -> SocketDirectory.Problem? {
        do throws(SocketDirectory.Problem) {
            try SocketDirectory.verify(path)
            return nil
        } catch {
            return error
        }
    }

    // MARK: - The directory check

    @Test func aDirectoryOfOursWithMode0700Passes() throws {
        let directory = try TemporaryDirectory()
        chmod(directory.path, 0o700)
        #expect(Self.problem(directory.path) == nil)
    }

    @Test func aDirectoryGroupOrOthersMayEnterIsRefusedWithItsMode() throws {
        let directory = try TemporaryDirectory()
        for mode: mode_t in [0o755, 0o710, 0o701, 0o1777] {
            chmod(directory.path, mode)
            let problem = Self.problem(directory.path)
            #expect(problem == .openToOthers(mode: S_IFDIR | mode), "mode 0\(String(mode, radix: 8))")
            #expect(problem?.description.contains("its mode is 0\(String(mode, radix: 8))") == true)
        }
    }

    @Test func aSymbolicLinkIsRefusedEvenWhenItLeadsToAPrivateDirectory() throws {
        let base = try TemporaryDirectory()
        try base.makeDirectory("private")
        chmod(base.url("private"), 0o700)
        try FileManager.default.createSymbolicLink(atPath: base.url("link"), withDestinationPath: base.url("private"))
        #expect(Self.problem(base.url("link")) == .symbolicLink)
    }

    @Test func aFileOrNothingIsNotADirectory() throws {
        let base = try TemporaryDirectory()
        try base.write("file", "x")
        #expect(Self.problem(base.url("file")) == .notADirectory)
        #expect(Self.problem(base.url("missing")) == .missing)
    }

    @Test(.enabled(if: getuid() == 0, "skipped: giving a directory to another user (chown) needs root"))
    func anotherUsersDirectoryIsRefusedNamingThem() throws {
        let base = try TemporaryDirectory()
        try base.makeDirectory("theirs")
        chmod(base.url("theirs"), 0o700)
        chown(base.url("theirs"), 65534, 65534)
        let problem = Self.problem(base.url("theirs"))
        #expect(problem == .ownedByAnotherUser(uid: 65534))
        #expect(problem?.description.contains("it belongs to \(UserNames.describe(65534)), not to \(UserNames.describe(geteuid()))") == true)
    }

    // MARK: - The place picked

    @Test func aShortStateDirectoryHoldsTheSocketAndAStalePointerGoes() throws {
        let base = try TemporaryDirectory()
        try base.makeDirectory(".autosave")
        chmod(base.url(".autosave"), 0o700)
        try base.write(".autosave/agent.sock.path", "/tmp/old.sock\n")
        let location = try SocketLocation.make(
            stateDirectory: base.url(".autosave"), root: base.path, environment: [:], logger: LogCapture.logger(AsyncRecorder()))
        #expect(location.path == base.url(".autosave/agent.sock"))
        #expect(location.pointer == nil && location.runDirectory == nil)
        #expect(!base.exists(".autosave/agent.sock.path"))
    }

    @Test func aStateDirectoryOthersMayEnterIsPassedOverAndSaidSo() throws {
        let base = try TemporaryDirectory()
        try base.makeDirectory(".autosave")
        chmod(base.url(".autosave"), 0o755)
        let runtime = base.url("runtime")
        try base.makeDirectory("runtime")
        chmod(runtime, 0o700)
        let logs = AsyncRecorder<CapturedLog>()
        let location = try SocketLocation.make(
            stateDirectory: base.url(".autosave"), root: base.path, environment: ["XDG_RUNTIME_DIR": runtime], logger: LogCapture.logger(logs))
        #expect(location.path.hasPrefix(runtime + "/autosave-"))
        let ignored = try #require(logs.elements.first { $0.event == "socket-dir-ignored" })
        #expect(ignored.fields["path"] == base.url(".autosave"))
        #expect(ignored.fields["error"]?.contains("its mode is 0755") == true)
        #expect(ignored.fields["next"] == "the socket is \(location.path) instead")
    }

    @Test func aPrivateRuntimeDirectoryHoldsTheSocketOfALongRootNamedInThePointer() throws {
        let base = try TemporaryDirectory()
        let state = try Self.longStateDirectory(in: base)
        let runtime = base.url("runtime")
        try base.makeDirectory("runtime")
        chmod(runtime, 0o700)
        let logs = AsyncRecorder<CapturedLog>()
        let location = try SocketLocation.make(
            stateDirectory: state, root: base.path, environment: ["XDG_RUNTIME_DIR": runtime], logger: LogCapture.logger(logs))
        #expect(location.path.hasPrefix(runtime + "/autosave-") && location.path.hasSuffix(".sock"))
        #expect(location.pointer == state + "/agent.sock.path")
        #expect(try String(contentsOfFile: state + "/agent.sock.path", encoding: .utf8) == location.path + "\n")
        #expect(logs.elements.isEmpty, "a state directory too long is no reason to warn: \(logs.elements)")
        location.release()
        #expect(!FileManager.default.fileExists(atPath: state + "/agent.sock.path"))
        #expect(FileManager.default.fileExists(atPath: runtime), "XDG_RUNTIME_DIR is not ours to remove")
    }

    @Test func aRuntimeDirectoryOthersMayEnterIsIgnoredForAPrivateOneUnderTMPDIR() throws {
        let base = try TemporaryDirectory()
        let state = try Self.longStateDirectory(in: base)
        let temporary = try Self.stickyTemporary(in: base)
        try base.makeDirectory("runtime")
        chmod(base.url("runtime"), 0o755)
        let logs = AsyncRecorder<CapturedLog>()
        let location = try SocketLocation.make(
            stateDirectory: state, root: base.path, environment: ["XDG_RUNTIME_DIR": base.url("runtime"), "TMPDIR": temporary],
            logger: LogCapture.logger(logs))
        let shared = temporary + "/autosave-\(geteuid())"
        #expect(location.path.hasPrefix(shared + "/autosave-"))
        #expect(location.runDirectory == nil)
        var status = stat()
        #expect(lstat(shared, &status) == 0 && status.st_mode == S_IFDIR | 0o700 && status.st_uid == geteuid())
        let ignored = try #require(logs.elements.first { $0.event == "socket-dir-ignored" })
        #expect(ignored.level == .warning)
        #expect(ignored.fields["path"] == base.url("runtime"))
        #expect(ignored.fields["error"] == "XDG_RUNTIME_DIR: its mode is 0755: group or others may enter it (it must be 0700)")
        location.release()
        #expect(FileManager.default.fileExists(atPath: shared), "the user's socket directory stays, as tmux's does")
    }

    @Test func aTMPDIROthersCouldRenameIntoIsPassedOver() throws {
        let base = try TemporaryDirectory()
        let state = try Self.longStateDirectory(in: base)
        try base.makeDirectory("open")
        chmod(base.url("open"), 0o777)
        let logs = AsyncRecorder<CapturedLog>()
        let location = try SocketLocation.make(
            stateDirectory: state, root: base.path, environment: ["TMPDIR": base.url("open")], logger: LogCapture.logger(logs))
        #expect(location.path.hasPrefix("/tmp/autosave-\(geteuid())"))
        let ignored = try #require(logs.elements.first { $0.event == "socket-dir-ignored" })
        #expect(ignored.fields["path"] == base.url("open"))
        #expect(ignored.fields["error"]?.contains("others may write to it and it is not sticky") == true)
        location.release()
    }

    @Test(.enabled(if: getuid() == 0, "skipped: giving a directory to another user (chown) needs root"))
    func aSocketDirectoryAnotherUserMadeFirstGivesWayToOneOfThisRunsOwn() throws {
        let base = try TemporaryDirectory()
        let state = try Self.longStateDirectory(in: base)
        let temporary = try Self.stickyTemporary(in: base)
        let squatted = temporary + "/autosave-\(geteuid())"
        mkdir(squatted, 0o777)
        chmod(squatted, 0o777)
        chown(squatted, 65534, 65534)
        let logs = AsyncRecorder<CapturedLog>()
        let location = try SocketLocation.make(
            stateDirectory: state, root: base.path, environment: ["TMPDIR": temporary], logger: LogCapture.logger(logs))
        let own = try #require(location.runDirectory)
        #expect(own.hasPrefix(squatted + "-") && location.path == own + "/" + (location.path as NSString).lastPathComponent)
        var status = stat()
        #expect(lstat(own, &status) == 0 && status.st_mode == S_IFDIR | 0o700 && status.st_uid == geteuid())
        let ignored = try #require(logs.elements.first { $0.event == "socket-dir-ignored" })
        #expect(ignored.fields["path"] == squatted)
        #expect(ignored.fields["error"]?.contains("it belongs to \(UserNames.describe(65534))") == true)
        #expect(ignored.fields["next"] == "the socket is \(location.path) instead")
        #expect(try String(contentsOfFile: state + "/agent.sock.path", encoding: .utf8) == location.path + "\n")
        location.release()
        #expect(!FileManager.default.fileExists(atPath: own), "the run's own directory is removed")
        #expect(!FileManager.default.fileExists(atPath: state + "/agent.sock.path"))
        #expect(FileManager.default.fileExists(atPath: squatted), "the other user's is left alone")
    }

    @Test func aPointerFileNamingAnotherSocketIsLeftAloneAtRelease() throws {
        let base = try TemporaryDirectory()
        let state = try Self.longStateDirectory(in: base)
        let temporary = try Self.stickyTemporary(in: base)
        let location = try SocketLocation.make(
            stateDirectory: state, root: base.path, environment: ["TMPDIR": temporary], logger: LogCapture.logger(AsyncRecorder()))
        try TemporaryDirectory.writeFile(state + "/agent.sock.path", Array("/elsewhere/next-run.sock\n".utf8))
        location.release()
        #expect(try String(contentsOfFile: state + "/agent.sock.path", encoding: .utf8) == "/elsewhere/next-run.sock\n")
    }
}
