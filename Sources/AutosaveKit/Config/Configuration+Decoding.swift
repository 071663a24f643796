extension Configuration {
    /// Reads a configuration from JSON text, starting from the defaults.
    ///
    /// - Parameter file: the file's name, for messages.
    /// - Throws: `ConfigurationError.syntax` with line and column, or `.invalid` listing every
    ///   unknown key (with the nearest valid one) and every value that is not allowed.
    public static func decode(_ bytes: [UInt8], file: String) throws(ConfigurationError) -> Configuration {
        let document: JSONValue
        do { document = try JSONReader.parse(bytes) } catch { throw .syntax(file: file, error) }
        var configuration = Configuration()
        var problems: [ConfigurationError.Problem] = []
        guard case .object(let members) = document else {
            throw .invalid(file: file, [.init(key: "", message: "expected a JSON object, got \(document.kindDescription)", position: SourcePosition(line: 1, column: 1))])
        }
        decodeMembers(members, prefix: "", into: &configuration, problems: &problems)
        if problems.isEmpty && configuration.autosave.maxDelayMs < configuration.autosave.delayMs {
            problems.append(
                .init(
                    key: "autosave.maxDelayMs",
                    message: "\(configuration.autosave.maxDelayMs) is less than autosave.delayMs "
                        + "(\(configuration.autosave.delayMs)): the longest wait cannot be shorter than the quiet time",
                    position: position(of: "autosave.maxDelayMs", in: members)))
        }
        // Left unset, the cap on a busy name's wait grows with a long settle window instead of refusing it.
        if !isSet("watch.maxSettleMs", in: members) {
            configuration.watch.maxSettleMs = max(configuration.watch.maxSettleMs, configuration.watch.settleMs)
        }
        if problems.isEmpty && configuration.watch.maxSettleMs < configuration.watch.settleMs {
            problems.append(
                .init(
                    key: "watch.maxSettleMs",
                    message: "\(configuration.watch.maxSettleMs) is less than watch.settleMs "
                        + "(\(configuration.watch.settleMs)): a busy name cannot be reported sooner than a quiet one",
                    position: position(of: "watch.maxSettleMs", in: members)))
        }
        guard problems.isEmpty else { throw .invalid(file: file, problems) }
        return configuration
    }

    private static func decodeMembers(
        _ members: [JSONMember], prefix: String, into configuration: inout Configuration,
        problems: inout [ConfigurationError.Problem]
    ) {
        for member in members {
            let path = prefix.isEmpty ? member.key : prefix + "." + member.key
            if let field = ConfigurationSchema.fields.first(where: { $0.path == path }) {
                if let message = field.decode(&configuration, member.value) {
                    problems.append(.init(key: path, message: message, position: member.position))
                }
            } else if prefix.isEmpty, ConfigurationSchema.sections.contains(path) {
                guard case .object(let inner) = member.value else {
                    problems.append(.init(key: path, message: "expected an object, got \(member.value.kindDescription)", position: member.position))
                    continue
                }
                decodeMembers(inner, prefix: path, into: &configuration, problems: &problems)
            } else {
                problems.append(.init(key: path, message: unknownKeyMessage(path), position: member.position))
            }
        }
    }

    static func unknownKeyMessage(_ path: String) -> String {
        let candidates = ConfigurationSchema.fields.map(\.path) + ConfigurationSchema.sections
        let lowered = path.lowercased()
        let scored = candidates.map { ($0, editDistance(lowered, $0.lowercased())) }
        if let (best, distance) = scored.min(by: { $0.1 < $1.1 }), distance <= max(2, best.count / 3) {
            return "unknown key — did you mean `\(best)`?"
        }
        let section = path.split(separator: ".").first.map(String.init) ?? ""
        let siblings = ConfigurationSchema.fields.map(\.path).filter { $0.hasPrefix(section + ".") }
        let listed = siblings.isEmpty ? candidates.filter { !$0.contains(".") } : siblings
        return "unknown key; valid keys here: " + listed.map { "`\($0)`" }.joined(separator: ", ")
    }

    /// Whether the document names `path` itself (not only its section).
    private static func isSet(_ path: String, in members: [JSONMember]) -> Bool {
        var current = members
        for part in path.split(separator: ".") {
            guard let member = current.first(where: { $0.key == part }) else { return false }
            if case .object(let inner) = member.value { current = inner } else { current = [] }
        }
        return true
    }

    private static func position(of path: String, in members: [JSONMember]) -> SourcePosition? {
        let parts = path.split(separator: ".").map(String.init)
        var current = members
        var found: SourcePosition?
        for part in parts {
            guard let member = current.first(where: { $0.key == part }) else { return found }
            found = member.position
            if case .object(let inner) = member.value { current = inner } else { current = [] }
        }
        return found
    }

    /// Levenshtein distance, for suggesting the key that was meant.
    static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a.utf8)
        let b = Array(b.utf8)
        var previous = Array(0...b.count)
        for i in 1...max(a.count, 1) where !a.isEmpty {
            var current = [i] + Array(repeating: 0, count: b.count)
            for j in stride(from: 1, through: b.count, by: 1) {
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
            }
            previous = current
        }
        return a.isEmpty ? b.count : previous[b.count]
    }

    /// The configuration as the nested JSON object `autosave config` prints.
    public var jsonValue: JSONValue {
        var top: [JSONMember] = []
        let origin = SourcePosition(line: 0, column: 0)
        for field in ConfigurationSchema.fields {
            let value = field.encode(self)
            let parts = field.path.split(separator: ".", maxSplits: 1).map(String.init)
            if parts.count == 1 {
                top.append(JSONMember(key: parts[0], value: value, position: origin))
                continue
            }
            let member = JSONMember(key: parts[1], value: value, position: origin)
            if let index = top.firstIndex(where: { $0.key == parts[0] }), case .object(var inner) = top[index].value {
                inner.append(member)
                top[index].value = .object(inner)
            } else {
                top.append(JSONMember(key: parts[0], value: .object([member]), position: origin))
            }
        }
        return .object(top)
    }
}

extension JSONValue {
    /// The value written with two-space indentation, one key per line.
    public func prettyText(indent: String = "") -> String {
        let inner = indent + "  "
        switch self {
        case .object(let members) where !members.isEmpty:
            return "{\n" + members.map { inner + JSONValue.quoted($0.key) + ": " + $0.value.prettyText(indent: inner) }
                .joined(separator: ",\n") + "\n" + indent + "}"
        case .array(let items) where !items.isEmpty:
            return "[" + items.map(\.jsonText).joined(separator: ", ") + "]"
        default:
            return jsonText
        }
    }
}
