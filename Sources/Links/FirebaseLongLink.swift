public import AASA

/// Firebase Dynamic Links long links — `https://go.example.com/?link=<deep link>&apn=…&ibi=…&isi=…` —
/// read into the same link rule a config writes, so they are routed exactly as configured links are
/// (FDL's documented flow: the store or its fallback per platform, `ofl` for desktops, `efr=1` straight
/// to the store). Whatever the request says, it can only send a visitor to the site's allowlist and to
/// the site's own app: anything else is refused with the parameter and why, never redirected.
public enum FirebaseLongLink {
    /// More than FDL ever used (about 30 keys); a query of thousands of parameters is refused unread.
    public static let parameterLimit = 64
    static let tokenLimit = 40

    public struct Parsed: Sendable {
        public var rule: LinkRule
        /// `d=1`: the flow per platform as a page (FDL's debug mode).
        public var debug: Bool
    }

    public struct Refusal: Error, Sendable, Equatable {
        public var parameter: String
        public var reason: String
    }

    /// The keys FDL documented; others (an app's own tracking) are left alone.
    static let known: Set<String> = [
        "link", "apn", "afl", "amv", "ibi", "ifl", "ius", "ipbi", "ipfl", "isi", "imv", "efr", "ofl", "st", "sd", "si", "utm_source",
        "utm_medium", "utm_campaign", "utm_term", "utm_content", "at", "ct", "mt", "pt", "d",
    ]

    /// `ownHosts`: this site's hosts, which `link` may not name (a long link to a link is a loop).
    public static func parse(query: String, links: SiteLinks, ownHosts: Set<String>) -> Result<Parsed, Refusal> {
        parameters(query: query).flatMap { rule($0, links: links, ownHosts: ownHosts) }
    }

    /// FDL's parameters of a long link's query, decoded; other keys (an app's own tracking) left out.
    public static func parameters(query: String) -> Result<[String: String], Refusal> {
        var values: [String: String] = [:]
        var count = 0
        for item in query.split(separator: "&", omittingEmptySubsequences: true) {
            count += 1
            if count > parameterLimit {
                return .failure(Refusal(parameter: "(query)", reason: "has more than \(parameterLimit) parameters"))
            }
            let equals = item.firstIndex(of: "=") ?? item.endIndex
            guard let name = URLText.formDecoded(item[..<equals]),
                let value = URLText.formDecoded(equals == item.endIndex ? "" : item[item.index(after: equals)...])
            else {
                return .failure(Refusal(parameter: String(item.prefix(20)), reason: "is not valid percent-encoded UTF-8"))
            }
            guard known.contains(name) else { continue }
            if values[name] != nil { return .failure(Refusal(parameter: name, reason: "is given twice")) }
            values[name] = value
        }
        return .success(values)
    }

    /// The link rule FDL's parameters describe — from a long link, a short-link API request or an export
    /// (``FirebaseShortLinkRequest``, ``TakeoutCSV``) — checked against the site's allowlist and app.
    public static func rule(_ values: [String: String], links: SiteLinks, ownHosts: Set<String>) -> Result<Parsed, Refusal> {
        func refuse(_ name: String, _ reason: String) -> Result<Parsed, Refusal> { .failure(Refusal(parameter: name, reason: reason)) }
        guard let linkText = values["link"], !linkText.isEmpty else {
            return refuse("link", "is required: the deep link, URL-encoded (https://…)")
        }
        var checked: [String: CheckedURL] = [:]
        for name in ["link", "afl", "ifl", "ipfl", "ofl"] {
            guard let text = values[name] else { continue }
            guard let url = CheckedURL(text) else {
                return refuse(name, "must be an http(s) URL with a host name and no spaces, backslashes, user info or control characters")
            }
            guard links.allow.allows(url) else {
                return refuse(name, "points at \(url.host), which this site's links.allow does not list")
            }
            checked[name] = url
        }
        if let link = checked["link"], ownHosts.contains(link.host) {
            return refuse("link", "is itself a link on this domain; FDL refused links to links, and so does this server")
        }
        let app = links.app
        let bundle = app?.appleID.flatMap { id in id.firstIndex(of: ".").map { String(id[id.index(after: $0)...]) } }
        for name in ["ibi", "ipbi"] {
            guard let given = values[name] else { continue }
            guard given == bundle else {
                return refuse(name, "names \(given); this domain's links open \(bundle ?? "no iOS app")")
            }
        }
        if let given = values["apn"], given != app?.androidPackage {
            return refuse("apn", "names \(given); this domain's links open \(app?.androidPackage ?? "no Android app")")
        }
        if let given = values["isi"], given != app?.appStoreID {
            return refuse("isi", "is \(given); this domain's app has App Store ID \(app?.appStoreID ?? "(none configured)")")
        }
        var rule = LinkRule(component: ReservedPaths.firebaseLongLink)
        rule.webOnly = false
        rule.literalDestinations = true
        rule.deepLink = Located(linkText)
        rule.web = Located(values["ofl"] ?? linkText)
        rule.ios.fallback = values["ifl"].map { Located($0) }
        rule.ios.ipadFallback = values["ipfl"].map { Located($0) }
        rule.ios.straightToStore = values["efr"] == "1"
        rule.android.fallback = values["afl"].map { Located($0) }
        if let amv = values["amv"] {
            guard let version = Int(amv), version >= 1 else { return refuse("amv", "must be a positive whole number (a versionCode)") }
            rule.android.minVersionCode = version
        }
        for name in ["ct", "pt", "at", "mt"] {
            guard let token = values[name] else { continue }
            guard token.utf8.count <= tokenLimit else { return refuse(name, "is longer than \(tokenLimit) bytes") }
        }
        rule.ios.campaignToken = values["ct"]
        rule.ios.providerToken = values["pt"]
        rule.ios.affiliateToken = values["at"]
        rule.ios.mediaType = values["mt"]
        if values["st"] != nil || values["sd"] != nil || values["si"] != nil {
            var preview = LinkPreview(title: values["st"], description: values["sd"])
            if let image = values["si"] {
                guard let url = CheckedURL(image), url.scheme == "https" else { return refuse("si", "must be an https URL of an image") }
                preview.image = url.text
            }
            rule.preview = preview
        }
        return .success(Parsed(rule: rule, debug: values["d"] == "1"))
    }
}
