/// A site object: its hosts, what it serves for Apple (generated or a hosted file), and the services
/// whose `apps` name apps of the config.
extension ConfigDecoder {
    static func decodeSite(
        _ node: JSONNode,
        _ path: JSONPath,
        aliases: AppTable,
        _ reader: inout NodeReader
    )
        -> Site?
    {
        guard let members = reader.object(node, path, what: "a site object such as {\"hosts\": [\"example.com\"], ...}")
        else { return nil }
        reader.checkKeys(members, path, known: siteKeys, context: "site")
        var hosts = SiteHosts.empty
        if let hostsNode = node["hosts"] {
            var parsed: [Located<HostPattern>] = []
            let written = reader.stringArray(hostsNode, path.key("hosts"), hint: "write [\"example.com\"]") ?? []
            for host in written {
                switch HostPattern.parse(host.value) {
                case .success(let pattern): parsed.append(Located(pattern, host.origin))
                case .failure(let error):
                    reader.report(.error, "host.invalid", error.message, host.origin.location, host.origin.path)
                }
            }
            // Every host kept: each one's path is `hosts[i]` under the site's, not kept host by host.
            hosts =
                parsed.count == written.count
                ? SiteHosts(parsed.map { ($0.value, $0.origin.location) }, hostsOf: path) : SiteHosts(parsed)
            if hostsNode.arrayValue?.isEmpty == true {
                reader.report(
                    .error,
                    "site.hosts-missing",
                    "\"hosts\" is empty; list at least one host",
                    hostsNode.location,
                    path.key("hosts")
                )
            }
        } else {
            reader.report(.error, "site.hosts-missing", "this site has no \"hosts\"; list the host names it serves", node.location, path)
        }

        var android = decodeSiteAndroid(node, path, aliases: aliases, &reader)
        let links = node["links"].flatMap { decodeLinks($0, path.key("links"), hosts: hosts, aliases: aliases, &reader) }
        // A link site that names no Android apps of its own is associated with the links' app.
        if android == nil, node["android"] == nil, node["assetlinksFile"] == nil, let name = links?.app?.name,
            let app = aliases.android[name]
        {
            android = .generated([app])
        }
        if let links, case .generated(var apps)? = android, let components = dynamicComponents(links, path.key("links"), &reader) {
            for index in apps.indices { apps[index].dynamicComponents = components }
            android = .generated(apps)
        }
        let generatedKeys = ["applinks", "webcredentials", "appclips", "activitycontinuation"]
        let presentGenerated = members.filter { generatedKeys.contains($0.key) }
        if let fileNode = node["file"] {
            if !presentGenerated.isEmpty {
                reader.report(
                    .error,
                    "site.source",
                    "a site either hosts a verbatim \"file\" or generates its document from "
                        + presentGenerated.map { "\"\($0.key)\"" }.joined(separator: ", ") + " — not both. Remove one",
                    node.location,
                    path
                )
            }
            guard let file = reader.string(fileNode, path.key("file")) else { return nil }
            if file.value.isEmpty {
                reader.report(.error, "site.source", "\"file\" is empty; give the AASA file's path", fileNode.location, path.key("file"))
                return nil
            }
            return Site(hosts: hosts, source: .file(file), android: android, links: links, origin: Provenance(node.location, path))
        }
        // Declared Android apps make the site's purpose clear even when none of them resolved (that error is
        // reported where the name is): no second "serves nothing" finding.
        if presentGenerated.isEmpty, let links {
            // The links say which paths open the app: the association follows them.
            guard let applinks = applinks(from: links) else {
                return Site(hosts: hosts, source: .none, android: android, links: links, origin: Provenance(node.location, path))
            }
            return Site(
                hosts: hosts,
                source: .generated(GeneratedSite(applinks: applinks)),
                android: android,
                links: links,
                origin: Provenance(node.location, path)
            )
        }
        if presentGenerated.isEmpty && (android != nil || node["android"] != nil || node["assetlinksFile"] != nil) {
            // Android only: the AASA paths answer as for an unknown host.
            return Site(hosts: hosts, source: .none, android: android, origin: Provenance(node.location, path))
        }
        if presentGenerated.isEmpty {
            reader.report(
                .error,
                "site.source",
                "this site serves nothing: add \"applinks\" (and/or \"webcredentials\", \"appclips\", "
                    + "\"activitycontinuation\"), or \"file\" with a verbatim AASA file, or \"android\" / \"assetlinksFile\"",
                node.location,
                path
            )
        }
        var generated = GeneratedSite()
        for member in presentGenerated {
            let memberPath = path.key(member.key)
            switch member.key {
            case "applinks":
                generated.applinks = decodeAppLinks(member.value, memberPath, aliases: aliases, &reader)
                // The reserved space is never the app's, whatever the site's own rules say.
                if links != nil, var applinks = generated.applinks {
                    for index in applinks.details.indices { applinks.details[index].components.insert(ReservedPaths.exclusion, at: 0) }
                    generated.applinks = applinks
                }
            case "webcredentials":
                generated.webcredentials = decodeService(member.value, memberPath, aliases: aliases, &reader)
                generated.webcredentialsOrigin = Provenance(member.value.location, memberPath)
            case "appclips":
                generated.appclips = decodeService(member.value, memberPath, aliases: aliases, &reader)
                generated.appclipsOrigin = Provenance(member.value.location, memberPath)
            case "activitycontinuation":
                generated.activitycontinuation = decodeService(member.value, memberPath, aliases: aliases, &reader)
                generated.activitycontinuationOrigin = Provenance(member.value.location, memberPath)
            default: break
            }
        }
        return Site(hosts: hosts, source: .generated(generated), android: android, links: links, origin: Provenance(node.location, path))
    }

    static func decodeService(
        _ node: JSONNode,
        _ path: JSONPath,
        aliases: AppTable,
        _ reader: inout NodeReader
    )
        -> [Located<String>]?
    {
        guard let members = reader.object(node, path, what: "an object such as {\"apps\": [\"shop\"]}") else { return nil }
        reader.checkKeys(members, path, known: serviceKeys, context: path.lastComponentDescription)
        guard let appsNode = node["apps"] else {
            reader.report(
                .error,
                "service.apps-missing",
                "\(path.lastComponentDescription) needs \"apps\": a list of app names or IDs",
                node.location,
                path
            )
            return nil
        }
        return resolveApps(appsNode, owner: path, aliases: aliases, &reader)
    }

    /// The first of `earlier` names whose app ID is `id`: a later name of that ID is not listed again.
    static func firstName(giving id: String, among earlier: some Sequence<String>, aliases: AppTable) -> String? {
        earlier.first { aliases.apple[$0] == id }
    }

    /// Replaces app names by their IDs; a string containing '.' is taken as a literal app ID.
    static func resolveApps(
        _ node: JSONNode,
        owner: JSONPath,
        aliases: AppTable,
        _ reader: inout NodeReader
    )
        -> [Located<String>]
    {
        let path = owner.key("apps")
        let references = reader.stringArray(node, path) ?? []
        var resolved: [Located<String>] = []
        resolved.reserveCapacity(references.count)
        // Two names of one app ID (app.duplicate-id warns at "apps") list it once, under the first name that
        // reached it. A site names an app or two: looking back costs less than a table, made only for long lists.
        var firstNames: [String: String]? = references.count > 16 ? [:] : nil
        for (position, reference) in references.enumerated() {
            if let id = aliases.apple[reference.value] {
                let firstName: String?
                if firstNames != nil {
                    firstName = firstNames?[id]
                    if firstName == nil { firstNames?[id] = reference.value }
                } else {
                    firstName = Self.firstName(giving: id, among: references[..<position].lazy.map(\.value), aliases: aliases)
                }
                if let firstName, firstName != reference.value { continue }
                resolved.append(Located(id, reference.origin))
            } else if reference.value.utf8.contains(UInt8(ascii: ".")) {
                resolved.append(reference)
            } else {
                if aliases.android[reference.value] != nil {
                    reader.report(
                        .error,
                        "app.unknown",
                        "app \"\(reference.value)\" has no Apple app ID (it defines only \"android\"); add \"apple\": "
                            + "\"TEAMID.bundle.id\" to it, or list it under this site's \"android\" instead",
                        reference.origin.location,
                        reference.origin.path,
                        absentKey: AbsentKey(object: owner.description, key: "apps")
                    )
                    continue
                }
                let suggestion = closestMatch(to: reference.value, in: Array(aliases.apple.keys).sorted())
                reader.report(
                    .error,
                    "app.unknown",
                    "no app named \"\(reference.value)\" in \"apps\""
                        + (suggestion.map { "; did you mean \"\($0)\"?" }
                            ?? "; define it under the top-level \"apps\" or write the full TEAMID.bundle.id"),
                    reference.origin.location,
                    reference.origin.path,
                    absentKey: AbsentKey(object: owner.description, key: "apps")
                )
            }
        }
        return resolved
    }
}
