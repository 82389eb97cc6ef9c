/// Builds `assetlinks.json` from a site's Android apps: canonical, so the same config always gives the
/// same bytes — apps in the order written, one statement per package and relation, fingerprints as
/// written (already canonical), compact JSON.
public enum AssetLinksGenerator {
    public static func statements(for apps: [AndroidApp]) -> [AssetStatement] {
        var statements: [AssetStatement] = []
        for app in apps {
            var seen = Set<String>()
            for relation in app.relations where seen.insert(relation.value).inserted {
                var statement = AssetStatement(
                    relations: [relation],
                    target: .androidApp(package: app.package, fingerprints: app.fingerprints),
                    origin: app.origin
                )
                // Declared once per site, relation and app, as Android asks.
                if relation.value == AssetRelation.handleAllURLs { statement.dynamicComponents = app.dynamicComponents }
                statements.append(statement)
            }
        }
        return statements
    }

    public static func bytes(for apps: [AndroidApp]) -> [UInt8] {
        JSONWriter.bytes(render(statements(for: apps)))
    }

    public static func render(_ statements: [AssetStatement]) -> JSONOutput {
        .array(
            statements.map { statement in
                var members: [(String, JSONOutput)] = []
                if let include = statement.include { return .object([("include", .string(include.value))]) }
                members.append(("relation", .array(statement.relations.map { .string($0.value) })))
                switch statement.target {
                case .androidApp(let package, let fingerprints):
                    members.append(
                        (
                            "target",
                            .object([
                                ("namespace", .string("android_app")),
                                ("package_name", .string(package.value)),
                                ("sha256_cert_fingerprints", .array(fingerprints.map { .string($0.value) })),
                            ])
                        )
                    )
                case .web(let site):
                    members.append(("target", .object([("namespace", .string("web")), ("site", .string(site.value))])))
                case .other(let namespace):
                    members.append(("target", .object([("namespace", .string(namespace))])))
                case nil: break
                }
                if let components = statement.dynamicComponents {
                    let rules = JSONOutput.array(components.map(dynamicComponent))
                    members.append(
                        ("relation_extensions", .object([(AssetRelation.handleAllURLs, .object([("dynamic_app_link_components", rules)]))]))
                    )
                }
                return .object(members)
            }
        )
    }

    /// One dynamic App Links rule: `/`, `?` (a dictionary of item patterns), `#`, `exclude` — the subset of
    /// an AASA component Android reads (``DynamicAppLinks/inexpressible(_:)`` says which do not fit).
    static func dynamicComponent(_ component: Component) -> JSONOutput {
        var members: [(String, JSONOutput)] = []
        if let path = component.path { members.append(("/", .string(path))) }
        if case .items(let items)? = component.query {
            members.append(("?", .object(items.map { ($0.name, .string($0.pattern)) })))
        }
        if let fragment = component.fragment { members.append(("#", .string(fragment))) }
        if component.exclude { members.append(("exclude", .bool(true))) }
        return .object(members)
    }
}

/// Android 15+ dynamic App Links from a link site's rules: the same components the site's AASA gets,
/// so iOS and Android open the same links.
public enum DynamicAppLinks {
    /// Why Android cannot read a component as iOS does; nil when it can. Android has no whole-query
    /// pattern, no substitution variables and no case-insensitive or decoded matching.
    public static func inexpressible(_ component: Component) -> String? {
        if case .whole? = component.query { return "a whole-query \"?\" pattern (Android matches query items only)" }
        let texts =
            [component.path, component.fragment].compactMap { $0 }
            + ((component.query).flatMap { query -> [String]? in
                if case .items(let items) = query { return items.map(\.pattern) + items.map(\.name) }
                return nil
            } ?? [])
        if texts.contains(where: { $0.contains("$(") }) { return "a substitution variable" }
        if component.options.caseSensitive == false { return "caseSensitive: false" }
        if component.options.percentEncoded == false { return "percentEncoded: false" }
        return nil
    }
}
