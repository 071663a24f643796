import CAutosaveShims
import Foundation

/// The built `autosave` binary, run as a user would run it, its stderr lines recorded.
public final class AgentProcess: Sendable {
    /// Lines the process wrote to standard error, as they came.
    public let stderrLines = AsyncRecorder<String>()
    /// Lines the process wrote to standard output.
    public let stdoutLines = AsyncRecorder<String>()
    private let process: SpawnedProcess

    /// The binary under test: `$AUTOSAVE_BINARY`, else `autosave` beside the test bundle.
    public static var binary: String {
        if let explicit = ProcessInfo.processInfo.environment["AUTOSAVE_BINARY"] { return explicit }
        let bundle = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        var directory = (bundle as NSString).deletingLastPathComponent
        while !directory.isEmpty && directory != "/" {
            let candidate = directory + "/autosave"
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: candidate, isDirectory: &isDirectory), !isDirectory.boolValue {
                return candidate
            }
            directory = (directory as NSString).deletingLastPathComponent
        }
        return ".build/debug/autosave"
    }

    /// Starts `executable arguments…` (the agent binary by default) in `directory`.
    public init(_ arguments: [String], executable: String = AgentProcess.binary, in directory: String? = nil) throws {
        var errors: [CInt] = [-1, -1]
        var output: [CInt] = [-1, -1]
        guard CAutosaveShims_pipeCloseOnExec(&errors) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        guard CAutosaveShims_pipeCloseOnExec(&output) == 0 else {
            close(errors[0])
            close(errors[1])
            throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
        }
        defer {
            // The child has its own copies of the write ends; the reader sees the end when it exits.
            close(errors[1])
            close(output[1])
        }
        do {
            process = try SpawnedProcess(executable: executable, arguments: arguments, directory: directory, output: output[1], errors: errors[1])
        } catch {
            close(errors[0])
            close(output[0])
            throw error
        }
        Self.forwardLines(of: FileHandle(fileDescriptor: errors[0], closeOnDealloc: true), to: stderrLines)
        Self.forwardLines(of: FileHandle(fileDescriptor: output[0], closeOnDealloc: true), to: stdoutLines)
    }

    public var processIdentifier: Int32 { process.processIdentifier }

    /// Sends a signal (SIGTERM by default).
    public func signal(_ number: Int32 = SIGTERM) { kill(process.processIdentifier, number) }

    /// Waits for the process to exit and returns its status; kills it after `timeout`.
    public func exitStatus(timeout: Duration = .seconds(30)) async -> Int32 {
        let exited = AsyncRecorder<Int32>()
        let process = self.process
        Thread.detachNewThread {
            exited.append(process.waitUntilExit())
        }
        if let status = try? await exited.first(timeout: timeout, "exit", where: { _ in true }) { return status }
        kill(process.processIdentifier, SIGKILL)
        return -1
    }

    /// Runs a command to completion and returns its exit status and both outputs.
    public static func run(
        _ arguments: [String], executable: String = AgentProcess.binary, in directory: String? = nil
    ) async throws -> (status: Int32, stdout: String, stderr: String) {
        let agent = try AgentProcess(arguments, executable: executable, in: directory)
        let status = await agent.exitStatus()
        await agent.stdoutLines.waitUntilFinished()
        await agent.stderrLines.waitUntilFinished()
        return (status, agent.stdoutLines.elements.joined(separator: "\n"), agent.stderrLines.elements.joined(separator: "\n"))
    }

    deinit {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    }

    private static func forwardLines(of handle: FileHandle, to recorder: AsyncRecorder<String>) {
        Thread.detachNewThread {
            var pending = Data()
            while true {
                let chunk = handle.availableData
                if chunk.isEmpty { break }
                pending.append(chunk)
                while let newline = pending.firstIndex(of: 0x0A) {
                    recorder.append(String(decoding: pending[pending.startIndex..<newline], as: UTF8.self))
                    pending.removeSubrange(pending.startIndex...newline)
                }
            }
            if !pending.isEmpty { recorder.append(String(decoding: pending, as: UTF8.self)) }
            recorder.finish()
        }
    }
}
