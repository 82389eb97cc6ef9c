/// A site's `links` object and an app's store listing (`appStoreID`, `name`, `icon`).
extension ConfigDecoder {
    static let linksKeys = ["app", "openHost", "rules", "firebaseLongLinks", "allow", "landingPage", "imageOrigins", "comment"]
    static let linkRuleKeys = AASADecoder.componentKeys + ["deepLink", "web", "ios", "android", "preview", "webOnly"]
    static let iosRouteKeys = ["fallback", "ipadFallback", "straightToStore", "campaignToken", "providerToken", "comment"]
    static let androidRouteKeys = ["fallback", "minVersionCode", "landing", "comment"]
    static let previewKeys = ["title", "description", "image", "comment"]

    /// `appStoreID`, `name` and `icon` of an `apps` entry; nil when it has none of them.
    static func decodeListing(_ node: JSONNode, _ path: JSONPath, _ reader: inout NodeReader) -> AppListing? {
        var listing = AppListing()
        if let idNode = node["appStoreID"] {
            let idPath = path.key("appStoreID")
            var text: String?
            if case .number(let number) = idNode.value { text = number } else { text = idNode.stringValue }
            if let text, !text.isEmpty, text.count <= 12, text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) {
                listing.appStoreID = text
            } else {
                reader.report(
                    .error,
                    "app.store-id",
                    "\"appStoreID\" must be the app's numeric App Store ID (the digits after \"id\" in "
                        + "https://apps.apple.com/app/id123456789), found \(text.map { "\"\($0)\"" } ?? idNode.typeName)",
                    idNode.location,
                    idPath
                )
            }
        }
        if let nameNode = node["name"] { listing.title = reader.string(nameNode, path.key("name"))?.value }
        if let iconNode = node["icon"], let icon = reader.string(iconNode, path.key("icon")) {
            if icon.value.lowercased().hasPrefix("https://") && LinkTemplate.authorityEnd(icon.value) != nil {
                listing.icon = icon.value
            } else {
                reader.report(
                    .error,
                    "app.icon",
                    "\"icon\" must be an https URL of the app's icon (shown on link landing pages), found \"\(icon.value)\"",
                    icon.origin.location,
                    icon.origin.path
                )
            }
        }
        return listing == AppListing() ? nil : listing
    }

    static func decodeLinks(
        _ node: JSONNode,
        _ path: JSONPath,
        hosts: SiteHosts,
        aliases: AppTable,
        _ reader: inout NodeReader
    ) -> SiteLinks? {
        guard let members = reader.object(node, path, what: "an object such as {\"app\": \"shop\", \"rules\": [{\"/\": \"/p/*\"}]}")
        else { return nil }
        reader.checkKeys(members, path, known: linksKeys, context: "links")
        var app: LinkApp?
        if let appNode = node["app"], let name = reader.string(appNode, path.key("app")) {
            if aliases.apple[name.value] != nil || aliases.android[name.value] != nil {
                let listing = aliases.listings[name.value]
                app = LinkApp(
                    name: name.value,
                    appleID: aliases.apple[name.value],
                    appStoreID: listing?.appStoreID,
                    title: listing?.title,
                    icon: listing?.icon,
                    androidPackage: aliases.android[name.value]?.package.value
                )
            } else {
                let suggestion = closestMatch(to: name.value, in: aliases.names)
                reader.report(
                    .error,
                    "app.unknown",
                    "no app named \"\(name.value)\" in \"apps\"" + (suggestion.map { "; did you mean \"\($0)\"?" } ?? ""),
                    name.origin.location,
                    name.origin.path
                )
            }
        }
        var openHost: Located<String>?
        if let openNode = node["openHost"], let host = reader.string(openNode, path.key("openHost")) {
            let normalized = host.value.lowercased()
            if case .success(let pattern) = HostPattern.parse(normalized), !pattern.isWildcard {
                if hosts.contains(where: { $0.value.description == normalized }) {
                    reader.report(
                        .error,
                        "links.open-host",
                        "\"openHost\" is \(normalized), a host of this site: a tap on a link to the page's own host stays in "
                            + "Safari (Apple's same-domain rule). Name another host whose AASA opens the same paths, e.g. open.\(normalized)",
                        host.origin.location,
                        host.origin.path
                    )
                } else {
                    openHost = Located(normalized, host.origin)
                }
            } else {
                reader.report(
                    .error,
                    "links.open-host",
                    "\"openHost\" must be one exact host name (no wildcard, no scheme), found \"\(host.value)\"",
                    host.origin.location,
                    host.origin.path
                )
            }
        }
        var firebase = false
        if let flag = node["firebaseLongLinks"] { firebase = reader.bool(flag, path.key("firebaseLongLinks")) ?? false }
        var entries: [DestinationAllowlist.Entry] = []
        if let allowNode = node["allow"] {
            for text in reader.stringArray(allowNode, path.key("allow"), hint: "write [\"shop.example.com\", \"https://example.com/app/\"]")
                ?? []
            {
                switch DestinationAllowlist.entry(text.value) {
                case .success(let entry): entries.append(entry)
                case .failure(let error): reader.report(.error, "links.allowlist", error.message, text.origin.location, text.origin.path)
                }
            }
        }
        if firebase && node["allow"] == nil {
            reader.report(
                .error,
                "links.allowlist",
                "\"firebaseLongLinks\" needs \"allow\": the hosts or URL prefixes a long link's link and fallbacks may point at — "
                    + "without it this domain would redirect anyone anywhere",
                node.location,
                path
            )
        }
        var landingPage: Located<String>?
        if let pageNode = node["landingPage"], let file = reader.string(pageNode, path.key("landingPage")) {
            if file.value.isEmpty {
                reader.report(
                    .error,
                    "links.landing-page",
                    "\"landingPage\" is empty: name an HTML file (relative to the config), e.g. \"pages/landing.html\"",
                    file.origin.location,
                    file.origin.path
                )
            } else {
                landingPage = file
            }
        }
        var imageOrigins: [String] = []
        if let originsNode = node["imageOrigins"] {
            for text in reader.stringArray(originsNode, path.key("imageOrigins"), hint: "write [\"https://cdn.example.com\"]") ?? [] {
                if let origin = LinkTemplate.origin(text.value), origin == text.value.lowercased(), origin.hasPrefix("https://") {
                    imageOrigins.append(origin)
                } else {
                    reader.report(
                        .error,
                        "links.image-origin",
                        "\"\(text.value)\" is not an https origin: write the scheme and host only, e.g. \"https://cdn.example.com\" "
                            + "(the page's Content-Security-Policy allows images by origin)",
                        text.origin.location,
                        text.origin.path
                    )
                }
            }
        }
        var rules: [LinkRule] = []
        if let rulesNode = node["rules"] {
            let rulesPath = path.key("rules")
            if let items = rulesNode.arrayValue {
                for (index, item) in items.enumerated() {
                    if let rule = decodeLinkRule(item, rulesPath.index(index), app: app, &reader) { rules.append(rule) }
                }
                if items.isEmpty {
                    reader.report(
                        .warning,
                        "links.no-rules",
                        "\"rules\" is empty: no path of this site is a link",
                        rulesNode.location,
                        rulesPath
                    )
                }
            } else {
                reader.typeMismatch(
                    rulesNode,
                    rulesPath,
                    expected: "an array of link rules",
                    hint: "write [{\"/\": \"/p/*\", \"web\": \"https://…\"}]"
                )
            }
        } else if !firebase {
            reader.report(
                .error,
                "links.no-rules",
                "\"links\" has no \"rules\": list the link paths, e.g. [{\"/\": \"/*\"}]",
                node.location,
                path
            )
        }
        return SiteLinks(
            app: app,
            openHost: openHost,
            rules: rules,
            firebaseLongLinks: firebase,
            allow: DestinationAllowlist(entries: entries),
            landingPage: landingPage,
            imageOrigins: imageOrigins,
            origin: Provenance(node.location, path)
        )
    }

    static func decodeLinkRule(_ node: JSONNode, _ path: JSONPath, app: LinkApp?, _ reader: inout NodeReader) -> LinkRule? {
        guard
            let members = reader.object(
                node,
                path,
                what: "a link rule such as {\"/\": \"/p/*\", \"web\": \"https://shop.example.com/{1}\"}"
            )
        else { return nil }
        reader.checkKeys(members, path, known: linkRuleKeys, context: "link rule")
        guard let component = AASADecoder.decodeComponent(node, path, &reader, extraKeys: linkRuleKeys) else { return nil }
        var rule = LinkRule(component: component, origin: Provenance(node.location, path))
        let wildcards = (component.path ?? "").filter { $0 == "*" || $0 == "?" }.count
        func template(_ key: String, in object: JSONNode, _ objectPath: JSONPath) -> Located<String>? {
            guard let valueNode = object[key], let text = reader.string(valueNode, objectPath.key(key)) else { return nil }
            switch LinkTemplate.parse(text.value) {
            case .failure(let error):
                reader.report(.error, "links.template", error.message, text.origin.location, text.origin.path)
                return nil
            case .success(let parsed):
                if parsed.highestCapture > wildcards {
                    reader.report(
                        .error,
                        "links.capture",
                        "\"\(text.value)\" uses {\(parsed.highestCapture)}, but the rule's path "
                            + "\(component.path.map { "\"\($0)\"" } ?? "(none)") has \(wildcards) wildcard\(wildcards == 1 ? "" : "s") "
                            + "({1} is what the first '*' or '?' matched)",
                        text.origin.location,
                        text.origin.path
                    )
                    return nil
                }
                return text
            }
        }
        rule.deepLink = template("deepLink", in: node, path)
        rule.web = template("web", in: node, path)
        if let flag = node["webOnly"] { rule.webOnly = reader.bool(flag, path.key("webOnly")) ?? false }
        if let iosNode = node["ios"],
            let iosMembers = reader.object(iosNode, path.key("ios"), what: "an object such as {\"fallback\": \"https://…\"}")
        {
            let iosPath = path.key("ios")
            reader.checkKeys(iosMembers, iosPath, known: iosRouteKeys, context: "ios")
            rule.ios.fallback = template("fallback", in: iosNode, iosPath)
            rule.ios.ipadFallback = template("ipadFallback", in: iosNode, iosPath)
            if let flag = iosNode["straightToStore"] {
                rule.ios.straightToStore = reader.bool(flag, iosPath.key("straightToStore")) ?? false
            }
            for (key, limit) in [("campaignToken", 40), ("providerToken", 40)] {
                guard let tokenNode = iosNode[key], let token = reader.string(tokenNode, iosPath.key(key)) else { continue }
                if token.value.utf8.count > limit {
                    reader.report(
                        .error,
                        "links.store-token",
                        "\"\(key)\" is \(token.value.utf8.count) bytes; App Store tokens are at most \(limit)",
                        token.origin.location,
                        token.origin.path
                    )
                } else if key == "campaignToken" {
                    rule.ios.campaignToken = token.value
                } else {
                    rule.ios.providerToken = token.value
                }
            }
        }
        if let androidNode = node["android"],
            let androidMembers = reader.object(androidNode, path.key("android"), what: "an object such as {\"fallback\": \"https://…\"}")
        {
            let androidPath = path.key("android")
            reader.checkKeys(androidMembers, androidPath, known: androidRouteKeys, context: "android")
            rule.android.fallback = template("fallback", in: androidNode, androidPath)
            if let flag = androidNode["landing"] { rule.android.landing = reader.bool(flag, androidPath.key("landing")) ?? false }
            if let versionNode = androidNode["minVersionCode"] {
                if case .number(let text) = versionNode.value, let version = Int(text), version >= 1 {
                    rule.android.minVersionCode = version
                } else {
                    reader.typeMismatch(versionNode, androidPath.key("minVersionCode"), expected: "a positive whole number (a versionCode)")
                }
            }
        }
        if let previewNode = node["preview"],
            let previewMembers = reader.object(previewNode, path.key("preview"), what: "an object such as {\"title\": \"…\"}")
        {
            let previewPath = path.key("preview")
            reader.checkKeys(previewMembers, previewPath, known: previewKeys, context: "preview")
            var preview = LinkPreview()
            if let titleNode = previewNode["title"] { preview.title = reader.string(titleNode, previewPath.key("title"))?.value }
            if let textNode = previewNode["description"] {
                preview.description = reader.string(textNode, previewPath.key("description"))?.value
            }
            if let imageNode = previewNode["image"], let image = reader.string(imageNode, previewPath.key("image")) {
                if image.value.lowercased().hasPrefix("https://") && LinkTemplate.authorityEnd(image.value) != nil {
                    preview.image = image.value
                } else {
                    reader.report(
                        .error,
                        "links.preview-image",
                        "\"image\" must be an https URL (previews fetch it), found \"\(image.value)\"",
                        image.origin.location,
                        image.origin.path
                    )
                }
            }
            rule.preview = preview
        }
        checkPlacement(rule, path, &reader)
        if !rule.isExclusion { checkDestinations(rule, app: app, path, &reader) }
        return rule
    }

    /// The well-known paths stay JSON and the reserved space stays the server's: a rule written for them
    /// would never be used.
    static func checkPlacement(_ rule: LinkRule, _ path: JSONPath, _ reader: inout NodeReader) {
        guard let pattern = rule.component.path else { return }
        let literal = String(pattern.prefix { $0 != "*" && $0 != "?" })
        let wellKnown = ["/.well-known/", "/apple-app-site-association"]
        if wellKnown.contains(where: { literal.hasPrefix($0) || ($0.hasPrefix(literal) && literal.count > 1 && pattern == literal) }) {
            reader.report(
                .error,
                "links.well-known",
                "the rule \"\(pattern)\" is for the well-known paths, which always answer their JSON documents and are never "
                    + "links; remove it",
                rule.origin.location,
                path.key("/")
            )
        } else if literal.hasPrefix(ReservedPaths.prefix) {
            reader.report(
                .error,
                "links.reserved",
                "paths under \(ReservedPaths.prefix) are aasa-server's own on link domains and never links; choose another path",
                rule.origin.location,
                path.key("/")
            )
        }
    }

    /// Every platform must have somewhere to go when the app is not installed.
    static func checkDestinations(_ rule: LinkRule, app: LinkApp?, _ path: JSONPath, _ reader: inout NodeReader) {
        if rule.webOnly { return }
        if let app, app.appleID != nil, app.appStoreID == nil, rule.ios.fallback == nil {
            reader.report(
                rule.web == nil ? .error : .warning,
                "links.no-store",
                "an iPhone without \"\(app.name)\" has no App Store page to go to: add \"appStoreID\" to apps.\(app.name), or "
                    + "\"ios\": {\"fallback\": \"https://…\"} to this rule"
                    + (rule.web == nil ? "" : " (until then iPhones get the landing page with the web link)"),
                rule.origin.location,
                path
            )
        }
        if rule.ios.straightToStore && app?.appStoreID == nil {
            reader.report(
                .error,
                "links.no-store",
                "\"straightToStore\" needs the app's \"appStoreID\" in apps" + (app.map { ".\($0.name)" } ?? ""),
                rule.origin.location,
                path.key("ios").key("straightToStore")
            )
        }
        if app == nil && rule.web == nil && rule.ios.fallback == nil && rule.android.fallback == nil {
            reader.report(
                .error,
                "links.no-destination",
                "this rule sends visitors nowhere: set \"app\" in \"links\" (for the stores), or \"web\", or the platform fallbacks",
                rule.origin.location,
                path
            )
        }
    }

    /// The site's link rules as Android 15+ dynamic App Links (the same components as its generated
    /// AASA); nil, with a warning, when a rule is one Android cannot read — then the manifest's own
    /// filters decide, rather than rules that would open more or less than iOS does.
    static func dynamicComponents(_ links: SiteLinks, _ path: JSONPath, _ reader: inout NodeReader) -> [Component]? {
        let rules = links.rules.filter { !$0.webOnly }
        for rule in rules {
            guard let reason = DynamicAppLinks.inexpressible(rule.component) else { continue }
            reader.report(
                .warning,
                "links.android-dynamic",
                "this link rule has \(reason), which Android's dynamic App Links cannot express: assetlinks.json gets no "
                    + "dynamic rules, and Android 15+ opens what the app's manifest declares",
                rule.origin.location,
                rule.origin.path
            )
            return nil
        }
        return [ReservedPaths.exclusion] + (links.firebaseLongLinks ? [ReservedPaths.firebaseLongLink] : []) + rules.map(\.component)
    }

    /// The association a link site serves when it writes none: its links open the app, the reserved space
    /// never does.
    static func applinks(from links: SiteLinks) -> AppLinksConfig? {
        guard let appleID = links.app?.appleID else { return nil }
        var applinks = AppLinksConfig()
        let components =
            [ReservedPaths.exclusion] + (links.firebaseLongLinks ? [ReservedPaths.firebaseLongLink] : [])
            + links.rules.filter { !$0.webOnly }.map(\.component)
        applinks.details = [DetailsConfig(apps: [Located(appleID, links.origin)], components: components, origin: links.origin)]
        applinks.origin = links.origin
        return applinks
    }
}
