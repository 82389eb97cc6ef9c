/// Builds `assetlinks.json` from a site's Android apps: canonical, so the same config always gives the
/// same bytes — apps in the order written, one statement per package and relation, fingerprints as
/// written (already canonical), compact JSON.
public enum AssetLinksGenerator {
    public static func statements(for apps: [AndroidApp]) -> [AssetStatement] {
        var statements: [AssetStatement] = []
        for app in apps {
            var seen = Set<String>()
            for relation in app.relations where seen.insert(relation.value).inserted {
                statements.append(
                    AssetStatement(
                        relations: [relation],
                        target: .androidApp(package: app.package, fingerprints: app.fingerprints),
                        origin: app.origin
                    )
                )
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
                return .object(members)
            }
        )
    }
}
