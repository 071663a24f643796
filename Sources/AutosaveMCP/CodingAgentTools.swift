import AutosaveKit

/// The tools a coding agent sees: their names (an interface: clients and prompts name them), a
/// line each written for a model, and a JSON Schema for their input.
enum CodingAgentTools {
    static let all: [JSONValue] = [
        tool(
            "read_file",
            "Read a file as the people editing it see it (their unsaved edits included), with line numbers and its revision. "
                + "A result holds at most 256 KB: what did not fit is named at the end, with the offset (and column, inside a long line) to read it.",
            ["path": string("File path, relative to the project root."),
             "offset": integer("First line to show, counting from 1 (default 1)."),
             "limit": integer("How many lines to show (default 2000)."),
             "column": integer(
                "Where in line `offset` to start, in bytes counting from 1 (default 1): "
                    + "to read on inside a line too long for one result, as its note says.")],
            required: ["path"], readOnly: true),
        tool(
            "write_file", "Create or replace a whole file; merged with edits others made since you read it, refused where they collide.",
            ["path": string("File path, relative to the project root; missing folders are made."),
             "content": string("The file's whole new content."),
             "ifRevision": integer("The revision you read; when the file has changed since, your write is merged with those changes or refused.")],
            required: ["path", "content"]),
        tool(
            "edit_file", "Replace exact text in a file (old_string must be unique unless replace_all); never overwrites anyone's unsaved edits.",
            ["path": string("File path, relative to the project root."),
             "old_string": string("The exact text to replace, whitespace included, as read_file shows it (without the line numbers)."),
             "new_string": string("The text to put in its place."),
             "replace_all": boolean("Replace every occurrence of old_string (default false)."),
             "ifRevision": integer("The revision you read; when the file has changed since, your edit is merged with those changes or refused.")],
            required: ["path", "old_string", "new_string"]),
        tool(
            "apply_patch", "Apply a unified diff (git diff, diff -u) to the files it names, all or nothing.",
            ["patch": string("The unified diff.")], required: ["patch"]),
        tool(
            "changes", "What changed since your last call: edits by people, tools and other clients, so you re-read before editing those files.",
            ["since": integer("The cursor the previous call returned (default: everything since this session began).")],
            required: [], readOnly: true),
        tool(
            "save", "Write files to disk now and wait until they are durable (the agent saves by itself a moment after each edit).",
            ["paths": .object([
                field("type", .string("array")), field("items", .object([field("type", .string("string"))])),
                field("description", .string("Files to save (default: every file with unsaved edits).")),
            ])],
            required: []),
        tool("status", "The files open in the agent, their revisions and whether they have unsaved edits.", [:], required: [], readOnly: true),
        tool(
            "history", "Every version of a file the agent kept, newest first: who wrote it (people, tools, you), when, and how many lines changed.",
            ["path": string("File path, relative to the project root (a folder lists its files' versions)."),
             "limit": integer("At most this many versions (default 50).")],
            required: ["path"], readOnly: true),
        tool(
            "restore", "Bring back one version of a file, as an edit merged with unsaved edits (it can be undone the same way).",
            ["path": string("File path, relative to the project root."),
             "version": string("A version id from history, or -N for N versions before the latest (-1: before the last change).")],
            required: ["path", "version"]),
        tool(
            "undo_my_changes",
            "Take back what this session wrote (edits, files it created), keeping everyone else's later edits; a file where they overlap is left as it is and named.",
            ["since": string("Only your changes from then on: 20m, \"2 hours ago\", 2026-11-27T10:00 (default: all of this session's)."),
             "paths": .object([
                field("type", .string("array")), field("items", .object([field("type", .string("string"))])),
                field("description", .string("Files or folders to undo in (default: the whole project).")),
             ]),
             "dry_run": boolean("Change nothing: return the unified diff of what would change (default false).")],
            required: []),
    ]

    /// The tools' names, in order.
    static var names: [String] { all.compactMap { $0["name"]?.stringValue } }

    private static func tool(
        _ name: String, _ description: String, _ properties: KeyValuePairs<String, JSONValue>, required: [String],
        readOnly: Bool = false
    ) -> JSONValue {
        var fields = [
            field("name", .string(name)), field("description", .string(description)),
            field("inputSchema", .object([
                field("type", .string("object")),
                field("properties", .object(properties.map { field($0.key, $0.value) })),
                field("required", .array(required.map { .string($0) })),
                field("additionalProperties", .bool(false)),
            ])),
        ]
        if readOnly { fields.append(field("annotations", .object([field("readOnlyHint", .bool(true))]))) }
        return .object(fields)
    }

    private static func property(_ type: String, _ description: String) -> JSONValue {
        .object([field("type", .string(type)), field("description", .string(description))])
    }

    private static func string(_ description: String) -> JSONValue { property("string", description) }
    private static func integer(_ description: String) -> JSONValue { property("integer", description) }
    private static func boolean(_ description: String) -> JSONValue { property("boolean", description) }
}
