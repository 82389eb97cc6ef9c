import AASA
import Links

/// `match` on a link domain: beside which app opens a URL, what each kind of visitor gets when the app
/// is not installed, and which link rule decided — the same pure routing the server runs.
enum LinkPrediction {
    struct Prediction {
        /// "link rule 1 {"/":"/p/*"} (line 12)", "an FDL long link", or why the URL is no link.
        var decidedBy: String
        var answers: [(visitor: String, answer: String)]
    }

    static func predict(_ links: SiteLinks, siteHosts: [HostPattern], host: String, url: MatchURL) -> Prediction {
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

    static func human(_ prediction: Prediction) -> String {
        guard !prediction.answers.isEmpty else { return "  without the app: \(prediction.decidedBy)\n" }
        var text = "  without the app, decided by \(prediction.decidedBy):\n"
        for (visitor, answer) in prediction.answers { text += "    \(visitor): \(answer)\n" }
        return text
    }

    static func json(_ prediction: Prediction) -> JSONOutput {
        .object([
            ("decidedBy", .string(prediction.decidedBy)),
            ("answers", .array(prediction.answers.map { .object([("visitor", .string($0.visitor)), ("answer", .string($0.answer))]) })),
        ])
    }
}
