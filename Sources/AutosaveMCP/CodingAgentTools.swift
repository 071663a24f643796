import MCP

/// The tools a coding agent sees: their names (an interface: clients and prompts name them), a
/// line each written for a model, and a JSON Schema for their input.
enum CodingAgentTools {
    static let all: [Tool] = [
        Tool(
            name: "read_file",
            description: "Read a file as the people editing it see it (their unsaved edits included), with line numbers and its revision.",
            inputSchema: schema(
                ["path": string("File path, relative to the project root."),
                 "offset": integer("First line to show, counting from 1 (default 1)."),
                 "limit": integer("How many lines to show (default 2000).")],
                required: ["path"]),
            annotations: .init(readOnlyHint: true)),
        Tool(
            name: "write_file",
            description: "Create or replace a whole file; merged with edits others made since you read it, refused where they collide.",
            inputSchema: schema(
                ["path": string("File path, relative to the project root; missing folders are made."),
                 "content": string("The file's whole new content."),
                 "ifRevision": integer("The revision you read; when the file has changed since, your write is merged with those changes or refused.")],
                required: ["path", "content"])),
        Tool(
            name: "edit_file",
            description: "Replace exact text in a file (old_string must be unique unless replace_all); never overwrites anyone's unsaved edits.",
            inputSchema: schema(
                ["path": string("File path, relative to the project root."),
                 "old_string": string("The exact text to replace, whitespace included, as read_file shows it (without the line numbers)."),
                 "new_string": string("The text to put in its place."),
                 "replace_all": boolean("Replace every occurrence of old_string (default false)."),
                 "ifRevision": integer("The revision you read; when the file has changed since, your edit is merged with those changes or refused.")],
                required: ["path", "old_string", "new_string"])),
        Tool(
            name: "apply_patch",
            description: "Apply a unified diff (git diff, diff -u) to the files it names, all or nothing.",
            inputSchema: schema(["patch": string("The unified diff.")], required: ["patch"])),
        Tool(
            name: "changes",
            description: "What changed since your last call: edits by people, tools and other clients, so you re-read before editing those files.",
            inputSchema: schema(["since": integer("The cursor the previous call returned (default: everything since this session began).")], required: []),
            annotations: .init(readOnlyHint: true)),
        Tool(
            name: "save",
            description: "Write files to disk now and wait until they are durable (the agent saves by itself a moment after each edit).",
            inputSchema: schema(["paths": .object(["type": "array", "items": ["type": "string"], "description": "Files to save (default: every file with unsaved edits)."])], required: [])),
        Tool(
            name: "status",
            description: "The files open in the agent, their revisions and whether they have unsaved edits.",
            inputSchema: schema([:], required: []),
            annotations: .init(readOnlyHint: true)),
    ]

    private static func schema(_ properties: [String: Value], required: [String]) -> Value {
        .object([
            "type": "object", "properties": .object(properties), "required": .array(required.map { .string($0) }),
            "additionalProperties": false,
        ])
    }

    private static func string(_ description: String) -> Value { ["type": "string", "description": .string(description)] }
    private static func integer(_ description: String) -> Value { ["type": "integer", "description": .string(description)] }
    private static func boolean(_ description: String) -> Value { ["type": "boolean", "description": .string(description)] }
}
