public import AASA
import HTTP1
import Support

/// What a host is checked against, beyond Apple's rules.
public struct CheckExpectations: Sendable {
    /// `--app`: app IDs that must be in `applinks` (and are reported for the services).
    public var apps: [String] = []
    /// `--path`: URL paths to predict (which app opens them on this host).
    public var paths: [String] = []
    /// `--config`: the document the config generates for this host, and the config's path.
    public var expectedDocument: [UInt8]?
    public var configPath: String?
    /// `--insecure`: certificate problems are reported, but do not stop the check.
    public var insecure = false
    /// `--plain-http-ok`: an `http://` target is checked on purpose (an origin behind a TLS-terminating load
    /// balancer), so it is noted, not warned about.
    public var plainHTTPIntended = false
    /// `--android`, or a config site with Android apps: fetch and check `/.well-known/assetlinks.json`.
    public var android = false
    /// False for a config site with only Android apps: its AASA paths are not its business.
    public var apple = true
    /// `--app` values that are Android package names: each must be granted App Links on the host.
    public var packages: [String] = []
    /// `--config`: the statement list the config generates for this host (nil: none, so 404 is expected).
    public var expectedAssetLinks: [UInt8]?
    /// `--link PATH`: link paths clicked once per kind of visitor (docs/links.md).
    public var linkPaths: [String] = []
    /// `--config` on a link site: where the config lets its links send people (docs/links.md): its `allow`
    /// list, the hosts its rules' destinations and `openHost` name, and the two stores. A live redirect
    /// anywhere else is a finding.
    public var linkDestinations: DestinationAllowlist?

    public init() {}
}

extension CheckExpectations {
    /// These expectations for one host: with a config, what it generates for the host (the AASA, or the
    /// unknown-host answer; assetlinks.json when the site has Android apps) is expected live too.
    public func forHost(_ host: String, config: LoadedConfig?) -> CheckExpectations {
        guard let config else { return self }
        var expectations = self
        let site = config.site(forHost: host)
        // An Android-only site answers the AASA paths as an unknown host does.
        expectations.expectedDocument =
            site.flatMap { $0.servesApple ? $0.bytes : nil }
            ?? (config.config?.unknownHost == .notFound ? nil : LoadedConfig.emptyDocumentBytes)
        if let assetLinks = site?.assetLinks {
            expectations.expectedAssetLinks = assetLinks.bytes
            expectations.android = true
        }
        if let site, !site.servesApple { expectations.apple = false }
        expectations.linkDestinations = site?.site.links.map(Self.destinations)
        return expectations
    }

    static func destinations(of links: SiteLinks) -> DestinationAllowlist {
        var hosts = ["apps.apple.com", "play.google.com"]
        if let openHost = links.openHost { hosts.append(openHost.value) }
        for rule in links.rules {
            for template in [rule.web, rule.ios.fallback, rule.ios.ipadFallback, rule.android.fallback].compactMap({ $0 }) {
                if case .success(let parsed) = LinkTemplate.parse(template.value) { hosts.append(parsed.host) }
            }
        }
        return DestinationAllowlist(entries: links.allow.entries + hosts.map { .host($0) })
    }
}
