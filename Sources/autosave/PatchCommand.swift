import ArgumentParser
import AutosaveControl
import AutosaveKit

/// `autosave patch [FILE]`: applies a unified diff to the buffers of the files it names.
struct PatchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "patch",
        abstract: "Apply a unified diff (git diff, diff -u) from FILE or stdin to the buffers of every file it names, all or nothing.",
        discussion: """
            Prints {"path","revision"} per file. A hunk that does not apply is named with the line it \
            expected (exit status 1, no buffer changed). Hunks go where their headers say, or at the \
            nearest place where their lines all are, as patch(1) does without fuzz.
            """)
    @OptionGroup var client: ClientOptions
    @Argument(help: "The diff to apply (default: stdin).") var file: String?
    @Option(name: .long, help: "Refuse unless the buffer is at this revision (a patch of one file only).") var ifRevision: Int?
    @Flag(name: .long, help: "Only say whether it applies; change nothing.") var check = false

    func run() async throws {
        let content: RequestContent
        do {
            content = try file.map { try RequestContent.read(path: ClientOptions.absolute($0)) } ?? RequestContent.readStandardInput()
        } catch {
            printError("cannot read \(file ?? "stdin"): \(error)")
            throw ExitStatus.failure
        }
        let request = PatchMethod(diff: .raw(bytes: nil), isCheck: check, change: ChangeParams(ifRevision: ifRevision, client: "cli"))
        let answer = try await client.call(request, content: content).result
        for patched in answer.files {
            var line = patched.json
            if check, case .object(let fields) = line { line = .object(fields + [field("applies", .bool(true))]) }
            print(line.jsonText)
        }
    }
}
