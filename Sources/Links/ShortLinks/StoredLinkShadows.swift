public import AASA

/// Stored short links a config rule hides: a rule that names a path exactly answers it, whatever the link
/// store holds there (what is reviewed in git wins), so the stored link is never served — `validate` says
/// so at the rule.
public enum StoredLinkShadows {
    public static func findings(_ config: LoadedConfig, storedLinks: [StoredLink]) -> [Diagnostic] {
        var findings: [Diagnostic] = []
        for link in storedLinks where link.state != .deleted {
            guard let links = config.site(forHost: link.domain)?.site.links else { continue }
            let path = link.path
            guard
                let rule = links.rules.first(where: { rule in
                    !rule.component.exclude && rule.component.path == path && !path.contains(where: { $0 == "*" || $0 == "?" })
                })
            else { continue }
            findings.append(
                Diagnostic(
                    .warning,
                    "links.stored-shadowed",
                    "\(link.shortLink) is also a short link in the link store; this rule names \(path) exactly and answers it, so "
                        + "the stored link is never served: delete one of them (aasa-server links delete \(link.shortLink))",
                    at: rule.origin.location,
                    path: rule.origin.path.description
                )
            )
        }
        return findings
    }
}
