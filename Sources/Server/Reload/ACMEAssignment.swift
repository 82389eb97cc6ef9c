import AASA
import TLS

/// Which of the config's hosts ACME takes care of: every host no certificate file covers, when
/// `acme.hosts` is "config" (wildcard hosts only with a DNS hook: DNS-01 is the one challenge for them)
/// or on demand. A host neither covers is an error naming it, as without ACME.
enum ACMEAssignment {
    static func assign(
        _ sites: SiteList,
        acme: ACMESettings,
        fileNames: [[String]],
        table: HostTable<Int>,
        configPath: String
    ) -> (hosts: [String], diagnostics: [Diagnostic]) {
        var hosts: [String] = []
        var findings: [Diagnostic] = []
        for loaded in sites {
            var wildcardsWithoutHook: [String] = []
            var wildcardsWithoutAsk: [String] = []
            var unmanaged: [String] = []
            var firstOrigin: Provenance?
            // By index: a host's origin (its path made) only for the one finding that names it.
            let siteHosts = loaded.site.hosts
            for index in siteHosts.indices {
                let text = siteHosts.pattern(index).description
                let probe = text.hasPrefix("*.") ? "aasa-wildcard-check." + text.dropFirst(2) : text
                if let index = table.lookup(probe), fileNames[index].contains(where: { CertificateInspector.name($0, covers: text) }) {
                    continue
                }
                if text.hasPrefix("*.") {
                    // With a DNS hook a wildcard site gets its one certificate at start, whatever `hosts`
                    // says ("none" is about exact hosts: customers on demand beside a wildcard of your own).
                    if acme.dnsHook != nil {
                        hosts.append(text)
                    } else if let onDemand = acme.onDemand {
                        // Every name under the wildcard would be a new order: the CA's weekly allowance per
                        // registered domain spent by whoever makes up subdomains.
                        if onDemand.ask == nil {
                            wildcardsWithoutAsk.append(text)
                            if firstOrigin == nil { firstOrigin = siteHosts[index].origin }
                        }
                    } else {
                        wildcardsWithoutHook.append(text)
                        if firstOrigin == nil { firstOrigin = siteHosts[index].origin }
                    }
                } else if acme.configHosts {
                    hosts.append(text)
                } else if acme.onDemand == nil {
                    unmanaged.append(text)
                    if firstOrigin == nil { firstOrigin = siteHosts[index].origin }
                }
            }
            let location = firstOrigin?.location ?? loaded.site.origin.location
            let path = (firstOrigin?.path ?? loaded.site.origin.path).description
            if !wildcardsWithoutHook.isEmpty {
                findings.append(
                    Diagnostic(
                        .error,
                        "acme.wildcard",
                        "no certificate covers \(wildcardsWithoutHook.joined(separator: ", ")): a wildcard certificate needs the "
                            + "DNS-01 challenge; set acme.dnsHook to a command that publishes the TXT record, enable onDemand (a "
                            + "certificate per host as it is first asked for), or add a certificate file",
                        at: location,
                        path: path,
                        file: loaded.definedIn ?? configPath
                    )
                )
            }
            if !wildcardsWithoutAsk.isEmpty {
                findings.append(
                    Diagnostic(
                        .error,
                        "acme.on-demand-wildcard",
                        "onDemand covers \(wildcardsWithoutAsk.joined(separator: ", ")) without onDemand.ask: anyone could make up "
                            + "subdomains and spend the CA's certificates for the domain (Let's Encrypt allows 50 per registered "
                            + "domain a week); set onDemand.ask to a URL that answers 200 only for your customers' names, set "
                            + "acme.dnsHook for one wildcard certificate, or add a certificate file",
                        at: location,
                        path: path,
                        file: loaded.definedIn ?? configPath
                    )
                )
            }
            if !unmanaged.isEmpty {
                findings.append(
                    Diagnostic(
                        .error,
                        "tls.host-uncovered",
                        "no certificate covers \(unmanaged.joined(separator: ", ")), and acme.hosts is \"none\" without onDemand; "
                            + "set \"hosts\": \"config\", enable onDemand, or add a certificate file",
                        at: location,
                        path: path,
                        file: loaded.definedIn ?? configPath
                    )
                )
            }
        }
        return (hosts, findings)
    }

    /// What no certificate can ever come from: no challenge type the listeners allow (HTTP-01 needs a plain
    /// listener, TLS-ALPN-01 a TLS one, DNS-01 a hook). Wildcards always use DNS-01, whatever the list says,
    /// and are assigned only with a hook.
    static func unreachableHosts(
        _ hosts: [String],
        acme: ACMESettings,
        listeners: [ServerSettings.Listener],
        configPath: String
    ) -> [Diagnostic] {
        let needsExact = acme.onDemand != nil || hosts.contains { !$0.hasPrefix("*.") }
        var types = acme.challenges ?? ([.http01, .tlsALPN01] + (acme.dnsHook != nil ? [.dns01] : []))
        types.removeAll { ($0 == .http01 && !listeners.contains { !$0.tls }) || ($0 == .tlsALPN01 && !listeners.contains(where: \.tls)) }
        var findings: [Diagnostic] = []
        if needsExact && types.isEmpty {
            findings.append(
                Diagnostic(
                    .error,
                    "acme.no-challenge",
                    "no host can ever get a certificate: with these listeners and challenges no challenge can work — http-01 "
                        + "needs a plain listener (port 80 must reach it), tls-alpn-01 a TLS listener, dns-01 acme.dnsHook",
                    path: "$.server.acme.challenges",
                    file: configPath
                )
            )
        }
        return findings
    }
}
