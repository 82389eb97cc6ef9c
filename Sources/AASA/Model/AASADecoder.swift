/// Parses and structurally checks an apple-app-site-association file.
///
/// Structure and types are checked here; the meaning (app IDs, patterns, reachability, size) is the
/// ``AASAValidator``'s job, so generated documents get exactly the same semantic checks.
public enum AASADecoder {
    static let rootKeys = ["applinks", "webcredentials", "appclips", "activitycontinuation"]
    static let applinksKeys = ["apps", "details", "defaults", "substitutionVariables"]
    static let detailsKeys = ["appID", "appIDs", "components", "paths", "defaults"]
    static let componentKeys = ["/", "?", "#", "exclude", "comment", "caseSensitive", "percentEncoded"]
    static let optionKeys = ["caseSensitive", "percentEncoded"]

    public struct Result: Sendable {
        public var document: AASADocument?
        public var diagnostics: [Diagnostic]
    }

    /// Parses bytes and decodes them; `document` is nil only when the JSON itself is unusable.
    public static func decode(_ bytes: [UInt8]) -> Result {
        let parsed = JSONParser.parse(bytes, duplicateKeys: .warning)
        guard let root = parsed.root else { return Result(document: nil, diagnostics: parsed.diagnostics) }
        var result = decode(root)
        result.diagnostics = parsed.diagnostics + result.diagnostics
        return result
    }

    public static func decode(_ root: JSONNode) -> Result {
        var reader = NodeReader()
        guard let members = root.objectValue else {
            reader.report(
                .error,
                "json.root-not-object",
                "the document must be a JSON object such as {\"applinks\": {...}}, found \(root.typeName)" + root.wrappedDocumentHint,
                root.location,
                .root
            )
            return Result(document: nil, diagnostics: reader.findings)
        }
        // An aasa-server config handed over where an AASA file belongs: say so once, instead of a warning
        // per config key and "associates no app".
        if members.contains(where: { $0.key == "sites" }) && !members.contains(where: { rootKeys.contains($0.key) }) {
            reader.report(
                .error,
                "file.is-config",
                "this is an aasa-server config (it has \"sites\"), not an apple-app-site-association file; check it with "
                    + "`aasa-server validate --config FILE`, or see what it serves with `aasa-server generate --config FILE --host HOST`",
                root.location,
                .root
            )
            return Result(document: nil, diagnostics: reader.findings)
        }
        reader.checkKeys(
            members,
            .root,
            known: rootKeys,
            context: "top-level",
            unknownSeverity: .warning,
            explanation: " (Apple documents only these services; others are ignored)"
        )
        var document = AASADocument()
        for member in members {
            let path = JSONPath.root.key(member.key)
            switch member.key {
            case "applinks": document.applinks = decodeAppLinks(member.value, path, &reader)
            case "webcredentials": document.webcredentials = decodeService(member.value, path, &reader)
            case "appclips": document.appclips = decodeService(member.value, path, &reader)
            case "activitycontinuation": document.activitycontinuation = decodeService(member.value, path, &reader)
            default: break
            }
        }
        return Result(document: document, diagnostics: reader.findings)
    }

    static func decodeService(_ node: JSONNode, _ path: JSONPath, _ reader: inout NodeReader) -> ServiceApps? {
        guard let members = reader.object(node, path, what: "an object such as {\"apps\": [\"TEAMID.bundle\"]}") else {
            return nil
        }
        reader.checkKeys(members, path, known: ["apps"], context: "\(path.lastComponentDescription)")
        guard let appsNode = node["apps"] else {
            reader.report(
                .error,
                "service.apps-missing",
                "\(path.lastComponentDescription) needs an \"apps\" array of app IDs (TEAMID.bundle.id)",
                node.location,
                path
            )
            return ServiceApps(apps: [], origin: Provenance(node.location, path))
        }
        let apps = reader.stringArray(appsNode, path.key("apps")) ?? []
        return ServiceApps(apps: apps, origin: Provenance(node.location, path))
    }

    static func decodeAppLinks(_ node: JSONNode, _ path: JSONPath, _ reader: inout NodeReader) -> AppLinks? {
        guard let members = reader.object(node, path) else { return nil }
        reader.checkKeys(members, path, known: applinksKeys, context: "applinks")
        var applinks = AppLinks(details: [], origin: Provenance(node.location, path))
        var sawDetails = false
        for member in members {
            let memberPath = path.key(member.key)
            switch member.key {
            case "apps":
                applinks.apps = reader.stringArray(member.value, memberPath, hint: "it should be an empty array []")
            case "defaults":
                applinks.defaults = decodeDefaults(member.value, memberPath, &reader)
                applinks.defaultsOrigin = Provenance(member.value.location, memberPath)
            case "substitutionVariables":
                applinks.substitutionVariables = decodeVariables(member.value, memberPath, &reader)
            case "details":
                sawDetails = true
                if member.value.objectValue != nil {
                    reader.report(
                        .error,
                        "details.dictionary",
                        "\"details\" is an object keyed by app ID — the iOS 9 beta format that iOS no longer "
                            + "reads. Make it an array: [{\"appIDs\": [\"TEAMID.bundle\"], \"components\": [...]}]",
                        member.value.location,
                        memberPath
                    )
                } else if let items = member.value.arrayValue {
                    for (position, item) in items.enumerated() {
                        if let details = decodeDetails(item, memberPath.index(position), &reader) {
                            applinks.details.append(details)
                        }
                    }
                } else {
                    reader.typeMismatch(member.value, memberPath, expected: "an array of objects")
                }
            default: break
            }
        }
        if !sawDetails {
            reader.report(
                .error,
                "applinks.details-missing",
                "\"applinks\" has no \"details\" array, so no URL opens an app; add \"details\": [...]",
                node.location,
                path
            )
        }
        return applinks
    }

    static func decodeDefaults(_ node: JSONNode, _ path: JSONPath, _ reader: inout NodeReader) -> MatchOptions {
        guard let members = reader.object(node, path) else { return MatchOptions() }
        for member in members where !optionKeys.contains(member.key) {
            if componentKeys.contains(member.key) {
                reader.report(
                    .warning,
                    "defaults.undocumented-key",
                    "\"\(member.key)\" in \"defaults\" has no documented meaning (Apple documents only "
                        + "caseSensitive and percentEncoded there); this tool ignores it. Put it in a component",
                    member.keyLocation,
                    path.key(member.key)
                )
            } else {
                reader.checkKeys([member], path, known: optionKeys, context: "defaults")
            }
        }
        return reader.options(from: members, path)
    }

    static func decodeVariables(_ node: JSONNode, _ path: JSONPath, _ reader: inout NodeReader) -> [SubstitutionVariable] {
        guard let members = reader.object(node, path, what: "an object such as {\"food\": [\"taco\", \"pizza\"]}")
        else { return [] }
        var variables: [SubstitutionVariable] = []
        for member in members {
            let memberPath = path.key(member.key)
            guard let values = reader.stringArray(member.value, memberPath) else { continue }
            variables.append(
                SubstitutionVariable(name: member.key, values: values, origin: Provenance(member.keyLocation, memberPath))
            )
        }
        return variables
    }

    static func decodeDetails(_ node: JSONNode, _ path: JSONPath, _ reader: inout NodeReader) -> AppLinksDetails? {
        guard let members = reader.object(node, path) else { return nil }
        reader.checkKeys(members, path, known: detailsKeys, context: "details entry")
        var details = AppLinksDetails(origin: Provenance(node.location, path))
        for member in members {
            let memberPath = path.key(member.key)
            switch member.key {
            case "appID":
                if member.value.arrayValue != nil {
                    reader.typeMismatch(member.value, memberPath, expected: "a string", hint: "for several apps use \"appIDs\": [...]")
                } else {
                    details.appID = reader.string(member.value, memberPath)
                }
            case "appIDs":
                if let single = member.value.stringValue {
                    reader.typeMismatch(member.value, memberPath, expected: "an array of strings", hint: "write [\"\(single)\"]")
                } else {
                    details.appIDs = reader.stringArray(member.value, memberPath)
                }
            case "paths":
                details.paths = reader.stringArray(member.value, memberPath)
            case "components":
                guard let items = member.value.arrayValue else {
                    reader.typeMismatch(member.value, memberPath, expected: "an array of component objects")
                    continue
                }
                details.components = items.enumerated().compactMap { position, item in
                    decodeComponent(item, memberPath.index(position), &reader)
                }
            case "defaults":
                details.defaults = decodeDefaults(member.value, memberPath, &reader)
            default: break
            }
        }
        return details
    }

    /// Decodes one component; the config uses the same shape, so this is shared.
    /// `extraKeys`: a link rule is a component with more keys (its caller checks those).
    static func decodeComponent(
        _ node: JSONNode,
        _ path: JSONPath,
        _ reader: inout NodeReader,
        extraKeys: [String]? = nil
    ) -> Component? {
        guard let members = reader.object(node, path, what: "an object such as {\"/\": \"/product/*\"}") else {
            return nil
        }
        if extraKeys == nil {
            reader.checkKeys(
                members,
                path,
                known: componentKeys,
                context: "component",
                explanation: ". An unknown key is ignored, which can make the rule match every URL"
            )
        }
        var component = Component(origin: Provenance(node.location, path))
        // Member paths are made only where something keeps them or a finding names them: components are
        // most of a large config's values.
        for member in members {
            switch member.key {
            case "/": component.path = reader.string(member, in: path)
            case "#": component.fragment = reader.string(member, in: path)
            case "comment": component.comment = reader.string(member, in: path)
            case "exclude": component.exclude = reader.bool(member, in: path) ?? false
            case "?":
                let memberPath = path.key(member.key)
                if let text = member.value.stringValue {
                    component.query = .whole(text)
                } else if let items = member.value.objectValue {
                    var patterns: [QueryItemPattern] = []
                    for item in items {
                        let itemPath = memberPath.key(item.key)
                        if let value = reader.string(
                            item.value,
                            itemPath,
                            hint: "query item patterns are strings such as \"?*\""
                        ) {
                            patterns.append(
                                QueryItemPattern(
                                    name: item.key,
                                    pattern: value.value,
                                    origin: Provenance(item.keyLocation, itemPath)
                                )
                            )
                        }
                    }
                    component.query = .items(patterns)
                } else {
                    reader.typeMismatch(
                        member.value,
                        memberPath,
                        expected: "a string (the whole query) or an object of query item patterns"
                    )
                }
            default: break
            }
        }
        component.options = reader.options(from: members, path)
        return component
    }
}
