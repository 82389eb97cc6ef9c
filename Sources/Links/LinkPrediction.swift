public import AASA

/// What each kind of visitor without the app gets for a URL, and which link rule decided — the same pure
/// routing the server runs, for `match` and the console's host page.
public enum LinkPrediction {
    public struct Prediction: Sendable {
        /// "link rule 1 {"/":"/p/*"} (line 12)", "an FDL long link", or why the URL is no link.
        public var decidedBy: String
        public var answers: [(visitor: String, answer: String)]
    }

    public static func predict(_ links: SiteLinks, siteHosts: [HostPattern], host: String, url: MatchURL) -> Prediction {
        let path = url.path.isEmpty ? "/" : url.path
        let query = url.query
        if links.firebaseLongLinks, path == "/", let query, query.hasPrefix("link=") || query.contains("&link=") {
            switch FirebaseLongLink.parse(query: query, links: links, ownHosts: Set(siteHosts.map(\.description)).union([host])) {
            case .failure(let refusal):
                return Prediction(
                    decidedBy: "an FDL long link",
                    answers: [("everyone", "400: \(refusal.parameter) \(refusal.reason)")]
                )
            case .success(let parsed):
                let flow = LinkFlow.flow(parsed.rule, captures: [], links: links, host: host, path: path, query: query)
                return Prediction(decidedBy: "an FDL long link", answers: flow.map { ($0.name, LinkFlow.describe($0.decision)) })
            }
        }
        guard let found = LinkMatcher(rules: links.rules).match(path: path, query: query) else {
            let reason =
                path.hasPrefix(ReservedPaths.prefix)
                ? "\(ReservedPaths.prefix) is the server's own space, never a link" : "no link rule answers this path (a 404)"
            return Prediction(decidedBy: reason, answers: [])
        }
        let rule = links.rules[found.rule]
        let line = rule.origin.location.map { " (line \($0.line))" } ?? ""
        let flow = LinkFlow.flow(rule, captures: found.captures, links: links, host: host, path: path, query: query)
        return Prediction(
            decidedBy: "link rule \(found.rule) \(rule.component.summary)\(line)",
            answers: flow.map { ($0.name, LinkFlow.describe($0.decision)) }
        )
    }

    public static func human(_ prediction: Prediction) -> String {
        guard !prediction.answers.isEmpty else { return "  without the app: \(prediction.decidedBy)\n" }
        var text = "  without the app, decided by \(prediction.decidedBy):\n"
        for (visitor, answer) in prediction.answers { text += "    \(visitor): \(answer)\n" }
        return text
    }

    public static func json(_ prediction: Prediction) -> JSONOutput {
        .object([
            ("decidedBy", .string(prediction.decidedBy)),
            ("answers", .array(prediction.answers.map { .object([("visitor", .string($0.visitor)), ("answer", .string($0.answer))]) })),
        ])
    }
}

extension LinkPrediction {
    /// One line per rule for a listing: its pattern, then where visitors without the app go.
    public static func summary(_ rule: LinkRule, app: LinkApp?) -> String {
        if rule.isExclusion { return "\(rule.component.summary): not a link (a 404)" }
        var parts: [String] = []
        if let web = rule.web { parts.append("web \(web.value)") }
        if let fallback = rule.ios.fallback { parts.append("iOS fallback \(fallback.value)") }
        if let fallback = rule.ios.ipadFallback { parts.append("iPad fallback \(fallback.value)") }
        if rule.ios.straightToStore { parts.append("iPhones straight to the App Store") }
        if let fallback = rule.android.fallback { parts.append("Android fallback \(fallback.value)") }
        if rule.android.landing { parts.append("Android landing page") }
        if let deepLink = rule.deepLink { parts.append("deep link \(deepLink.value)") }
        if let title = rule.preview?.title { parts.append("preview \"\(title)\"") }
        if rule.webOnly { parts.append("web only") }
        if parts.isEmpty { parts.append(app?.appStoreID != nil ? "the stores and the landing page" : "the landing page") }
        return "\(rule.component.summary): " + parts.joined(separator: "; ")
    }
}
