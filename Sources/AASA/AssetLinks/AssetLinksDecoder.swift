import Support

/// Parses and checks a Digital Asset Links statement list (`assetlinks.json`) the way Google's parser
/// does — which rejects the **whole** file for one malformed statement — and names each problem with its
/// line:column, JSON path and the fix. Rule ids are `assetlinks.*`.
public enum AssetLinksDecoder {
    static let statementKeys = ["relation", "target", "include", "relation_extensions"]
    static let androidTargetKeys = ["namespace", "package_name", "sha256_cert_fingerprints"]
    static let webTargetKeys = ["namespace", "site"]

    /// No size is documented for statement lists; past this a file is unusual enough to say so.
    public static let sizeWarningThreshold = 128 * 1024

    public struct Result: Sendable {
        public var statements: [AssetStatement]?
        public var diagnostics: [Diagnostic]

        /// The statements Google's verifier (and Android's statement service) acts on: a statement with an
        /// error in it is skipped, and the others still count. None when the list itself is broken.
        public var verifiable: [AssetStatement] {
            guard let statements, !diagnostics.contains(where: { $0.severity == .error && ($0.path == "$" || $0.path == nil) }) else {
                return []
            }
            let errorPaths = diagnostics.filter { $0.severity == .error }.compactMap(\.path)
            return statements.filter { statement in
                let own = statement.origin.path.description
                return !errorPaths.contains { $0 == own || $0.hasPrefix(own + ".") || $0.hasPrefix(own + "[") }
            }
        }
    }

    /// Everything checked for a hosted (verbatim) file: JSON, structure, every statement, size.
    public static func validateFile(_ bytes: [UInt8]) -> Result {
        let parsed = JSONParser.parse(bytes, duplicateKeys: .warning)
        guard let root = parsed.root else { return Result(statements: nil, diagnostics: parsed.diagnostics) }
        var result = decode(root)
        result.diagnostics = parsed.diagnostics + result.diagnostics
        if bytes.count > sizeWarningThreshold {
            result.diagnostics.append(
                Diagnostic(
                    .warning,
                    "assetlinks.size",
                    "the file is \(bytes.count) bytes; no limit is documented, but a list this long is better split with "
                        + "{\"include\": \"https://…\"} statements",
                    at: SourceLocation(offset: 0, line: 1, column: 1),
                    path: "$"
                )
            )
        }
        return result
    }

    /// Whether parsed JSON looks like a statement list rather than an AASA file (a top-level array).
    public static func looksLikeStatementList(_ bytes: [UInt8]) -> Bool {
        bytes.first { $0 != 0x20 && $0 != 0x0A && $0 != 0x0D && $0 != 0x09 && $0 != 0xEF && $0 != 0xBB && $0 != 0xBF } == UInt8(ascii: "[")
    }

    public static func decode(_ root: JSONNode) -> Result {
        var reader = NodeReader()
        guard let items = root.arrayValue else {
            reader.report(
                .error,
                "assetlinks.root-not-array",
                "a statement list is a JSON array of statements ([{\"relation\": [...], \"target\": {...}}]), found "
                    + root.typeName + (root.objectValue != nil ? "; wrap the object in [ ]" : root.wrappedDocumentHint),
                root.location,
                .root
            )
            return Result(statements: nil, diagnostics: reader.findings)
        }
        if items.isEmpty {
            reader.report(
                .error,
                "assetlinks.empty",
                "the statement list is empty, which Google's verifier treats as an error: no app is linked. Add a "
                    + "statement, or answer 404 for a host without Android apps",
                root.location,
                .root
            )
        }
        var statements: [AssetStatement] = []
        for (index, item) in items.enumerated() {
            if let statement = decodeStatement(item, JSONPath.root.index(index), &reader) { statements.append(statement) }
        }
        reportDuplicates(statements, &reader)
        var findings = reader.findings
        // The verifier skips a statement whose namespace it does not know and still reads the others: only a
        // file left with no statement it acts on fails for it.
        let usable = statements.contains { statement in
            switch statement.target {
            case .androidApp, .web: return true
            case .other: return false
            case nil: return statement.include != nil
            }
        }
        if usable {
            for index in findings.indices where findings[index].rule == "assetlinks.namespace" && findings[index].severity == .error {
                findings[index].severity = .warning
                findings[index].message += "; the verifier skips this statement and still reads the others"
            }
        }
        return Result(statements: statements, diagnostics: findings)
    }

    static func decodeStatement(_ node: JSONNode, _ path: JSONPath, _ reader: inout NodeReader) -> AssetStatement? {
        guard let members = node.objectValue else {
            reader.report(
                .error,
                "assetlinks.statement-not-object",
                "each statement is an object with \"relation\" and \"target\", found \(node.typeName)",
                node.location,
                path
            )
            return nil
        }
        if let include = node["include"] {
            // An include stands alone: the parser rejects it next to relation or target.
            for member in members where member.key == "relation" || member.key == "target" {
                reader.report(
                    .error,
                    "assetlinks.include",
                    "an \"include\" statement cannot also have \"\(member.key)\"; put the statements in the included file "
                        + "or in their own entry",
                    member.keyLocation,
                    path.key(member.key)
                )
            }
            guard let url = reader.string(include, path.key("include")) else { return nil }
            switch AssetURL.parse(url.value) {
            case .failure(let problem):
                reader.report(.error, "assetlinks.include", problem.message, include.location, path.key("include"))
            case .success(let parsed) where parsed.scheme != "https":
                reader.report(
                    .error,
                    "assetlinks.include",
                    "\"\(url.value)\": an included file must be fetched over https (an https statement list cannot "
                        + "include anything less secure)",
                    include.location,
                    path.key("include")
                )
            case .success(let parsed):
                if let spelling = parsed.schemeSpelling {
                    reader.report(
                        .warning,
                        "assetlinks.include",
                        "\"\(url.value)\": the scheme \"\(spelling)\" is read as \"https\"; write it in lower case",
                        include.location,
                        path.key("include")
                    )
                }
            }
            return AssetStatement(relations: [], target: nil, include: url, origin: Provenance(node.location, path))
        }
        reportNonStandard(members, path, known: statementKeys, context: "statement", &reader)
        var relations: [Located<String>] = []
        if let relationNode = node["relation"] {
            relations = decodeRelations(relationNode, path.key("relation"), &reader)
        } else {
            reader.report(
                .error,
                "assetlinks.relation-missing",
                "this statement has no \"relation\" array; write \"relation\": [\"\(AssetRelation.handleAllURLs)\"]",
                node.location,
                path
            )
        }
        guard let targetNode = node["target"] else {
            reader.report(
                .error,
                "assetlinks.target-missing",
                "this statement has no \"target\" (the app or site it is about)",
                node.location,
                path
            )
            return AssetStatement(relations: relations, target: nil, origin: Provenance(node.location, path))
        }
        let target = decodeTarget(targetNode, path.key("target"), &reader)
        var statement = AssetStatement(relations: relations, target: target, origin: Provenance(node.location, path))
        if let extensions = node["relation_extensions"] {
            statement.dynamicComponents = decodeDynamicRules(extensions, path.key("relation_extensions"), &reader)
        }
        return statement
    }

    static let dynamicRuleKeys = ["/", "?", "#", "exclude", "comments"]

    /// Android 15+ dynamic App Links (`relation_extensions` → `handle_all_urls` → `dynamic_app_link_components`):
    /// an array of rules with `/`, `?` (an object of item patterns), `#` and `exclude`. Android discards
    /// every dynamic rule of the file when one field is malformed or empty, so each such field is an error.
    static func decodeDynamicRules(_ node: JSONNode, _ path: JSONPath, _ reader: inout NodeReader) -> [Component]? {
        guard let relationNode = node[AssetRelation.handleAllURLs], let rulesNode = relationNode["dynamic_app_link_components"]
        else { return nil }
        let rulesPath = path.key(AssetRelation.handleAllURLs).key("dynamic_app_link_components")
        func malformed(_ what: String, _ at: JSONNode, _ where: JSONPath) {
            reader.report(
                .error,
                "assetlinks.dynamic-rule",
                "\(what): Android 15+ then discards every dynamic rule of this file and opens what the app's manifest declares",
                at.location,
                `where`
            )
        }
        guard let items = rulesNode.arrayValue, !items.isEmpty else {
            malformed("\"dynamic_app_link_components\" must be a non-empty array of rules such as {\"/\": \"/p/*\"}", rulesNode, rulesPath)
            return nil
        }
        var components: [Component] = []
        for (index, item) in items.enumerated() {
            let itemPath = rulesPath.index(index)
            guard let members = item.objectValue, !members.isEmpty else {
                malformed("a dynamic rule must be a non-empty object such as {\"/\": \"/p/*\"}", item, itemPath)
                continue
            }
            var component = Component(origin: Provenance(item.location, itemPath))
            for member in members {
                let memberPath = itemPath.key(member.key)
                switch member.key {
                case "/", "#":
                    guard let text = member.value.stringValue, !text.isEmpty else {
                        malformed("\"\(member.key)\" must be a non-empty string pattern", member.value, memberPath)
                        continue
                    }
                    if member.key == "/" { component.path = text } else { component.fragment = text }
                case "?":
                    guard let entries = member.value.objectValue, !entries.isEmpty,
                        entries.allSatisfy({ $0.value.stringValue != nil })
                    else {
                        malformed(
                            "\"?\" must be a non-empty object of query item name to pattern, such as {\"dl\": \"*\"}",
                            member.value,
                            memberPath
                        )
                        continue
                    }
                    component.query = .items(entries.map { QueryItemPattern(name: $0.key, pattern: $0.value.stringValue ?? "") })
                case "exclude":
                    guard let flag = member.value.boolValue else {
                        malformed("\"exclude\" must be true or false", member.value, memberPath)
                        continue
                    }
                    component.exclude = flag
                case "comments": break
                default:
                    malformed(
                        "unknown dynamic rule key \"\(member.key)\""
                            + (closestMatch(to: member.key, in: dynamicRuleKeys).map { "; did you mean \"\($0)\"?" } ?? ""),
                        member.value,
                        memberPath
                    )
                }
            }
            components.append(component)
        }
        return components
    }

    static func decodeRelations(_ node: JSONNode, _ path: JSONPath, _ reader: inout NodeReader) -> [Located<String>] {
        guard let items = node.arrayValue else {
            reader.report(
                .error,
                "assetlinks.relation-type",
                "\"relation\" must be an array of strings, found \(node.typeName)"
                    + (node.stringValue != nil ? "; wrap it in [ ]" : ""),
                node.location,
                path
            )
            return []
        }
        if items.isEmpty {
            reader.report(
                .error,
                "assetlinks.relation-empty",
                "\"relation\" is empty, so this statement grants nothing",
                node.location,
                path
            )
        }
        var relations: [Located<String>] = []
        for (index, item) in items.enumerated() {
            guard let text = item.stringValue else {
                reader.report(
                    .error,
                    "assetlinks.relation-type",
                    "a relation is a string such as \"\(AssetRelation.handleAllURLs)\", found \(item.typeName)",
                    item.location,
                    path.index(index)
                )
                continue
            }
            let relation = Located(text, Provenance(item.location, path.index(index)))
            checkRelation(relation, &reader)
            relations.append(relation)
        }
        return relations
    }

    /// Grammar (an error: the verifier rejects the file) and whether Android or Chrome act on it (a warning).
    static func checkRelation(_ relation: Located<String>, _ reader: inout NodeReader) {
        if !AssetRelation.isWellFormed(relation.value) {
            let suggestion =
                AssetRelation.known.first {
                    $0.hasSuffix("." + relation.value.lowercased())
                        || $0.lowercased() == relation.value.lowercased().trimmingSpacesAndTabs()
                } ?? AssetRelation.meant(by: relation.value)
            reader.report(
                .error,
                "assetlinks.relation-invalid",
                "\"\(relation.value)\" is not a relation string: it must be kind/detail in lower-case letters, digits, '_' "
                    + "and '.', e.g. \"\(AssetRelation.handleAllURLs)\"" + (suggestion.map { "; did you mean \"\($0)\"?" } ?? ""),
                relation.origin.location,
                relation.origin.path
            )
        } else if !AssetRelation.known.contains(relation.value) {
            let suggestion = closestMatch(to: relation.value, in: AssetRelation.known)
            reader.report(
                .warning,
                "assetlinks.relation-unknown",
                "\"\(relation.value)\" is well-formed but Android and Chrome act only on "
                    + AssetRelation.known.map { "\"\($0)\"" }.joined(separator: ", ")
                    + (suggestion.map { "; did you mean \"\($0)\"?" } ?? ""),
                relation.origin.location,
                relation.origin.path
            )
        }
    }

    static func decodeTarget(_ node: JSONNode, _ path: JSONPath, _ reader: inout NodeReader) -> AssetStatement.Target? {
        guard let members = node.objectValue else {
            reader.report(
                .error,
                "assetlinks.target-type",
                "\"target\" must be an object such as {\"namespace\": \"android_app\", \"package_name\": …}, found \(node.typeName)",
                node.location,
                path
            )
            return nil
        }
        guard let namespaceNode = node["namespace"], let namespace = namespaceNode.stringValue else {
            reader.report(
                .error,
                "assetlinks.namespace",
                "the target has no \"namespace\" string; write \"android_app\" (an app) or \"web\" (a site)",
                node.location,
                path
            )
            return nil
        }
        switch namespace {
        case "android_app":
            reportNonStandard(members, path, known: androidTargetKeys, context: "android_app target", &reader)
            return decodeAndroidTarget(node, path, &reader)
        case "web":
            reportNonStandard(members, path, known: webTargetKeys, context: "web target", &reader)
            guard let siteNode = node["site"], let site = reader.string(siteNode, path.key("site")) else {
                reader.report(.error, "assetlinks.site", "a web target needs \"site\": \"https://host\"", node.location, path)
                return nil
            }
            let judged = webSiteProblem(site.value)
            if let problem = judged.error {
                reader.report(.error, "assetlinks.site", problem, site.origin.location, site.origin.path)
            } else if let warning = judged.warning {
                reader.report(.warning, "assetlinks.site", warning, site.origin.location, site.origin.path)
            }
            return .web(site: site)
        case "ios_app":
            reader.report(
                .warning,
                "assetlinks.namespace",
                "\"ios_app\" targets are in the Asset Links specification but neither Android nor Chrome uses them; iOS "
                    + "reads apple-app-site-association instead",
                namespaceNode.location,
                path.key("namespace")
            )
            return .other(namespace: namespace)
        default:
            let suggestion = closestMatch(to: namespace, in: ["android_app", "web"])
            reader.report(
                .error,
                "assetlinks.namespace",
                "\"\(namespace)\" is not a namespace the verifier knows; use \"android_app\" or \"web\""
                    + (suggestion.map { " (did you mean \"\($0)\"?)" } ?? ""),
                namespaceNode.location,
                path.key("namespace")
            )
            return nil
        }
    }

    static func decodeAndroidTarget(_ node: JSONNode, _ path: JSONPath, _ reader: inout NodeReader) -> AssetStatement.Target? {
        var package = Located("", Provenance(node.location, path))
        if let packageNode = node["package_name"], let name = reader.string(packageNode, path.key("package_name")) {
            package = name
            if let problem = AndroidIdentity.packageNameProblem(name.value) {
                reader.report(.error, "assetlinks.package-name", problem, name.origin.location, name.origin.path)
            }
        } else if node["package_name"] == nil {
            reader.report(
                .error,
                "assetlinks.package-missing",
                "an android_app target needs \"package_name\" (the applicationId, e.g. com.example.app)",
                node.location,
                path
            )
        }
        var fingerprints: [Located<String>] = []
        let fingerprintsPath = path.key("sha256_cert_fingerprints")
        if let list = node["sha256_cert_fingerprints"] {
            if let items = list.arrayValue {
                if items.isEmpty {
                    reader.report(
                        .error,
                        "assetlinks.fingerprints-missing",
                        "\"sha256_cert_fingerprints\" is empty; list the SHA-256 fingerprint of every key that signs the app "
                            + "(with Play App Signing: the one Play Console shows, not only your upload key)",
                        list.location,
                        fingerprintsPath
                    )
                }
                for (index, item) in items.enumerated() {
                    guard let text = item.stringValue else {
                        reader.typeMismatch(item, fingerprintsPath.index(index), expected: "a fingerprint string")
                        continue
                    }
                    let check = AndroidIdentity.checkFingerprint(text)
                    if let problem = check.problem {
                        reader.report(.error, "assetlinks.fingerprint", problem, item.location, fingerprintsPath.index(index))
                    }
                    fingerprints.append(Located(text, Provenance(item.location, fingerprintsPath.index(index))))
                }
            } else {
                reader.report(
                    .error,
                    "assetlinks.fingerprints-missing",
                    "\"sha256_cert_fingerprints\" must be an array, found \(list.typeName)"
                        + (list.stringValue != nil ? "; wrap it in [ ]" : ""),
                    list.location,
                    fingerprintsPath
                )
            }
        } else {
            reader.report(
                .error,
                "assetlinks.fingerprints-missing",
                "an android_app target needs \"sha256_cert_fingerprints\": [\"14:6D:E9:…\"] (without it no app can be verified)",
                node.location,
                path
            )
        }
        return .androidApp(package: package, fingerprints: fingerprints)
    }

    /// `http[s]://host[:port]`: the site is a whole origin, never a path.
    /// Why Google's parser refuses `site` as a web target (nil when it takes it), and a warning for a
    /// scheme in another case, which it accepts.
    static func webSiteProblem(_ site: String) -> (error: String?, warning: String?) {
        switch AssetURL.parse(site) {
        case .failure(let problem): return (problem.message, nil)
        case .success(let url):
            if !url.rest.isEmpty {
                return (
                    "\"\(site)\" has a path (\"\(url.rest)\"); a web target is scheme://host[:port] with nothing after it, not "
                        + "even \"/\" — the verifier skips this statement. Write \"\(url.scheme)://\(url.host)\(url.port.map { ":\($0)" } ?? "")\"",
                    nil
                )
            }
            return (
                nil, url.schemeSpelling.map { "\"\(site)\": the scheme \"\($0)\" is read as \"\(url.scheme)\"; write it in lower case" }
            )
        }
    }

    /// Keys the standard does not define are ignored by the parser (it allows them for extensibility).
    static func reportNonStandard(_ members: [JSONMember], _ path: JSONPath, known: [String], context: String, _ reader: inout NodeReader) {
        for member in members where !known.contains(member.key) {
            let suggestion = closestMatch(to: member.key, in: known)
            reader.report(
                suggestion != nil ? .error : .warning,
                "assetlinks.unknown-key",
                "\"\(member.key)\" is not a \(context) field"
                    + (suggestion.map { "; did you mean \"\($0)\"? As written it is ignored" } ?? "; it is ignored"),
                member.keyLocation,
                path.key(member.key),
                absentKey: suggestion.map { AbsentKey(object: path.description, key: $0) }
            )
        }
    }

    static func reportDuplicates(_ statements: [AssetStatement], _ reader: inout NodeReader) {
        var seen: [String: Provenance] = [:]
        for statement in statements {
            guard let target = statement.target else { continue }
            let targetKey: String
            switch target {
            case .androidApp(let package, let fingerprints):
                targetKey = "app:" + package.value + "|" + fingerprints.map(\.value).sorted().joined(separator: ",")
            case .web(let site): targetKey = "web:" + site.value
            case .other(let namespace): targetKey = "other:" + namespace
            }
            for relation in statement.relations {
                let key = relation.value + "|" + targetKey
                if let first = seen[key] {
                    reader.report(
                        .warning,
                        "assetlinks.duplicate",
                        "\"\(relation.value)\" for this target is already granted at \(first.path)"
                            + (first.location.map { " (line \($0.line))" } ?? "") + "; remove one",
                        relation.origin.location,
                        relation.origin.path
                    )
                } else {
                    seen[key] = relation.origin
                }
            }
        }
    }
}
