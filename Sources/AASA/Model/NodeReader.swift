/// Reads typed values out of a ``JSONNode`` tree, turning every surprise into a finding.
///
/// Shared by the AASA decoder and the config decoder so both speak the same way about wrong types
/// and unknown keys.
struct NodeReader {
    var findings: [Diagnostic] = []

    mutating func report(
        _ severity: Severity,
        _ rule: String,
        _ message: String,
        _ location: SourceLocation?,
        _ path: JSONPath,
        absentKey: AbsentKey? = nil
    ) {
        var finding = Diagnostic(severity, rule, message, at: location, path: path.description)
        finding.absentKey = absentKey
        findings.append(finding)
    }

    mutating func typeMismatch(_ node: JSONNode, _ path: JSONPath, expected: String, hint: String = "") {
        report(
            .error,
            "type.mismatch",
            "\(path.lastComponentDescription) must be \(expected), found \(node.typeName)\(hint.isEmpty ? "" : "; \(hint)")",
            node.location,
            path
        )
    }

    /// The object's members, or nil (with a finding) when the node is not an object.
    mutating func object(_ node: JSONNode, _ path: JSONPath, what: String = "an object") -> [JSONMember]? {
        guard let members = node.objectValue else {
            typeMismatch(node, path, expected: what)
            return nil
        }
        return members
    }

    /// Reports keys not in `known`: a key that differs only in case is `key.miscased`, anything else
    /// `key.unknown` with the closest known key suggested.
    mutating func checkKeys(
        _ members: [JSONMember],
        _ path: JSONPath,
        known: [String],
        context: @autoclosure () -> String,
        unknownSeverity: Severity = .error,
        explanation: String = ""
    ) {
        for member in members where !known.contains(member.key) {
            let memberPath = path.key(member.key)
            if var cased = known.first(where: { $0.lowercased() == member.key.lowercased() }) {
                // "appId" beside components means appIDs: components entries name their apps in an array.
                if cased == "appID", known.contains("appIDs"), members.contains(where: { $0.key == "components" }) { cased = "appIDs" }
                report(
                    .error,
                    "key.miscased",
                    "\"\(member.key)\" is not a \(context()) key — keys are case-sensitive, so it is ignored. "
                        + "Rename it to \"\(cased)\""
                        + (cased == "appIDs" ? ", a list beside components: \"appIDs\": [\"TEAMID.bundle.id\"]" : ""),
                    member.keyLocation,
                    memberPath,
                    absentKey: AbsentKey(object: path.description, key: cased)
                )
            } else if let suggestion = closestMatch(to: member.key, in: known) {
                report(
                    .error,
                    "key.unknown",
                    "unknown \(context()) key \"\(member.key)\"; did you mean \"\(suggestion)\"?\(explanation)",
                    member.keyLocation,
                    memberPath,
                    absentKey: AbsentKey(object: path.description, key: suggestion)
                )
            } else {
                report(
                    unknownSeverity,
                    "key.unknown",
                    "unknown \(context()) key \"\(member.key)\"; valid keys are "
                        + known.map { "\"\($0)\"" }.joined(separator: ", ") + explanation,
                    member.keyLocation,
                    memberPath
                )
            }
        }
    }

    mutating func string(_ node: JSONNode, _ path: JSONPath, hint: String = "") -> Located<String>? {
        guard let text = node.stringValue else {
            typeMismatch(node, path, expected: "a string", hint: hint)
            return nil
        }
        return Located(text, Provenance(node.location, path))
    }

    /// The string value of an object's member; the member's path is made only for a finding.
    mutating func string(_ member: JSONMember, in object: JSONPath) -> String? {
        if let text = member.value.stringValue { return text }
        return string(member.value, object.key(member.key))?.value
    }

    /// The boolean value of an object's member; the member's path is made only for a finding.
    mutating func bool(_ member: JSONMember, in object: JSONPath) -> Bool? {
        if let flag = member.value.boolValue { return flag }
        return bool(member.value, object.key(member.key))
    }

    mutating func bool(_ node: JSONNode, _ path: JSONPath) -> Bool? {
        if let flag = node.boolValue { return flag }
        var hint = ""
        if let text = node.stringValue, text == "true" || text == "false" {
            hint = "write \(text) without quotes"
        }
        typeMismatch(node, path, expected: "true or false", hint: hint)
        return nil
    }

    /// An array of strings; wrong items are reported one by one and skipped.
    mutating func stringArray(_ node: JSONNode, _ path: JSONPath, hint: String = "") -> [Located<String>]? {
        guard let items = node.arrayValue else {
            var arrayHint = hint
            if node.stringValue != nil && arrayHint.isEmpty { arrayHint = "wrap the value in [ ]" }
            typeMismatch(node, path, expected: "an array of strings", hint: arrayHint)
            return nil
        }
        var result: [Located<String>] = []
        for (position, item) in items.enumerated() {
            if let text = string(item, path.index(position)) { result.append(text) }
        }
        return result
    }

    /// Reads `caseSensitive` / `percentEncoded` members.
    mutating func options(from members: [JSONMember], _ path: JSONPath) -> MatchOptions {
        var options = MatchOptions()
        for member in members {
            switch member.key {
            case "caseSensitive": options.caseSensitive = bool(member.value, path.key(member.key))
            case "percentEncoded": options.percentEncoded = bool(member.value, path.key(member.key))
            default: break
            }
        }
        return options
    }
}

extension JSONPath {
    /// How messages name the value: `"exclude"` for `$.x.exclude`, `item 2 of "paths"` for `$.paths[2]`.
    var lastComponentDescription: String {
        let text = description
        if text.hasSuffix("]"), let open = text.lastIndex(of: "[") {
            let inner = text[text.index(after: open)..<text.index(before: text.endIndex)]
            if inner.hasPrefix("\"") { return "\"" + inner.dropFirst().dropLast() + "\"" }
            let parent = String(text[..<open])
            let parentName = parent.split(separator: ".").last.map(String.init) ?? parent
            return "item \(inner) of \"\(parentName.trimmingPrefix("$"))\""
        }
        if let dot = text.lastIndex(of: ".") { return "\"" + text[text.index(after: dot)...] + "\"" }
        return "the document"
    }
}

/// The known word nearest to `word` (case-insensitive edit distance), if it is plausibly a typo.
public func closestMatch(to word: String, in candidates: [String]) -> String? {
    let lowered = Array(word.lowercased().unicodeScalars)
    var best: (String, Int)?
    for candidate in candidates {
        let distance = editDistance(lowered, Array(candidate.lowercased().unicodeScalars))
        if best == nil || distance < best?.1 ?? Int.max { best = (candidate, distance) }
    }
    guard let (candidate, distance) = best else { return nil }
    let allowed = max(1, min(3, candidate.count / 3))
    return distance <= allowed ? candidate : nil
}

/// Optimal-string-alignment distance: insertions, deletions, substitutions and adjacent swaps
/// ("emtpy" → "empty") each cost one.
func editDistance(_ a: [Unicode.Scalar], _ b: [Unicode.Scalar]) -> Int {
    if a.isEmpty { return b.count }
    if b.isEmpty { return a.count }
    var table = [[Int]](repeating: [Int](repeating: 0, count: b.count + 1), count: a.count + 1)
    for i in 0...a.count { table[i][0] = i }
    for j in 0...b.count { table[0][j] = j }
    for i in 1...a.count {
        for j in 1...b.count {
            let cost = a[i - 1] == b[j - 1] ? 0 : 1
            table[i][j] = min(table[i - 1][j] + 1, table[i][j - 1] + 1, table[i - 1][j - 1] + cost)
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                table[i][j] = min(table[i][j], table[i - 2][j - 2] + 1)
            }
        }
    }
    return table[a.count][b.count]
}
