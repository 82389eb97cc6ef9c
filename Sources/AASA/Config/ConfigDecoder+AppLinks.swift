/// The `applinks` section of a generated site: formats, defaults, substitution variables and details.
extension ConfigDecoder {
    static func decodeAppLinks(
        _ node: JSONNode,
        _ path: JSONPath,
        aliases: AppTable,
        _ reader: inout NodeReader
    )
        -> AppLinksConfig?
    {
        guard let members = reader.object(node, path) else { return nil }
        reader.checkKeys(members, path, known: applinksKeys, context: "applinks")
        var applinks = AppLinksConfig(origin: Provenance(node.location, path))
        for member in members {
            let memberPath = path.key(member.key)
            switch member.key {
            case "formats":
                var formats: [AppLinksFormat] = []
                for item in reader.stringArray(member.value, memberPath, hint: "write [\"modern\"], [\"legacy\"] or both") ?? [] {
                    if let format = AppLinksFormat(rawValue: item.value) {
                        if !formats.contains(format) { formats.append(format) }
                    } else {
                        let suggestion = closestMatch(to: item.value, in: AppLinksFormat.allCases.map(\.rawValue))
                        reader.report(
                            .error,
                            "applinks.format",
                            "unknown format \"\(item.value)\"; use \"modern\" (appIDs + components, iOS 13+) and/or "
                                + "\"legacy\" (appID + paths, iOS 12)" + (suggestion.map { " — did you mean \"\($0)\"?" } ?? ""),
                            item.origin.location,
                            item.origin.path
                        )
                    }
                }
                if member.value.arrayValue?.isEmpty == true {
                    reader.report(
                        .error,
                        "applinks.format",
                        "\"formats\" is empty; name at least one of \"modern\", \"legacy\"",
                        member.value.location,
                        memberPath
                    )
                }
                applinks.formats = formats.isEmpty ? [.modern] : formats
            case "defaults":
                applinks.defaults = AASADecoder.decodeDefaults(member.value, memberPath, &reader)
            case "substitutionVariables":
                applinks.substitutionVariables = AASADecoder.decodeVariables(member.value, memberPath, &reader)
            case "details":
                guard let items = member.value.arrayValue else {
                    reader.typeMismatch(member.value, memberPath, expected: "an array of {\"apps\", \"components\"} objects")
                    continue
                }
                for (index, item) in items.enumerated() {
                    if let details = decodeDetails(item, memberPath.index(index), aliases: aliases, &reader) {
                        applinks.details.append(details)
                    }
                }
            default: break
            }
        }
        if node["details"] == nil {
            reader.report(
                .error,
                "applinks.details-missing",
                "\"applinks\" needs \"details\": [{\"apps\": [...], \"components\": [...]}]",
                node.location,
                path
            )
        }
        return applinks
    }

    static func decodeDetails(
        _ node: JSONNode,
        _ path: JSONPath,
        aliases: AppTable,
        _ reader: inout NodeReader
    )
        -> DetailsConfig?
    {
        guard let members = reader.object(node, path) else { return nil }
        for member in members where !detailsKeys.contains(member.key) {
            let memberPath = path.key(member.key)
            switch member.key {
            case "appID", "appIDs":
                reader.report(
                    .error,
                    "key.unknown",
                    "in the config, a details entry lists its apps under \"apps\" (names from the top-level \"apps\" "
                        + "or full IDs); the generator writes \"\(member.key)\" for you",
                    member.keyLocation,
                    memberPath,
                    absentKey: AbsentKey(object: path.description, key: "apps")
                )
            case "paths":
                reader.report(
                    .error,
                    "key.unknown",
                    "in the config, rules are written as \"components\"; legacy \"paths\" are generated from them when "
                        + "\"formats\" includes \"legacy\"",
                    member.keyLocation,
                    memberPath,
                    absentKey: AbsentKey(object: path.description, key: "components")
                )
            default:
                reader.checkKeys([member], path, known: detailsKeys, context: "details entry")
            }
        }
        var details = DetailsConfig(apps: [], components: [], origin: Provenance(node.location, path))
        if let appsNode = node["apps"] {
            details.apps = resolveApps(appsNode, owner: path, aliases: aliases, &reader)
        } else {
            reader.report(
                .error,
                "details.no-app",
                "this entry has no \"apps\"; name the apps its components apply to",
                node.location,
                path
            )
        }
        if let componentsNode = node["components"] {
            if let items = componentsNode.arrayValue {
                let componentsPath = path.key("components")
                details.components = items.enumerated().compactMap { index, item in
                    AASADecoder.decodeComponent(item, componentsPath.index(index), &reader)
                }
            } else {
                reader.typeMismatch(componentsNode, path.key("components"), expected: "an array of component objects")
            }
        } else {
            reader.report(.error, "details.no-rules", "this entry has no \"components\"; add e.g. [{\"/\": \"/*\"}]", node.location, path)
        }
        if let defaults = node["defaults"] {
            details.defaults = AASADecoder.decodeDefaults(defaults, path.key("defaults"), &reader)
        }
        return details
    }
}
