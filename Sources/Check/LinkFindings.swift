import AASA
import HTTP1

/// `check --link PATH`: what each kind of visitor without the app gets for a link (docs/links.md), from
/// one GET per visitor — the wrong answers as findings with fixes. Pure, like the rest of the evaluation.
enum LinkFindings {
    /// One real User-Agent per class a link domain must answer differently.
    static let visitors: [(name: String, agent: String)] = [
        (
            "iPhone",
            "Mozilla/5.0 (iPhone; CPU iPhone OS 18_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.0 Mobile/15E148 Safari/604.1"
        ),
        (
            "Android",
            "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Mobile Safari/537.36"
        ),
        ("desktop", "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36"),
        ("link preview", "Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)"),
        (
            "in-app browser",
            "Mozilla/5.0 (iPhone; CPU iPhone OS 18_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148 Instagram 339.0.3.12.91"
        ),
    ]

    /// `destinations`: with `--config`, where the config lets this site's links send people.
    static func evaluate(
        _ observation: HostObservation,
        document: AASADocument?,
        destinations: DestinationAllowlist? = nil
    ) -> [CheckFinding] {
        var findings: [CheckFinding] = []
        let matcher = document.map { Matcher($0) }
        var byPath: [String: [(visitor: String, exchange: Exchange)]] = [:]
        var order: [String] = []
        for click in observation.links {
            if byPath[click.path] == nil { order.append(click.path) }
            byPath[click.path, default: []].append((click.visitor, click.exchange))
        }
        for path in order {
            let clicks = byPath[path] ?? []
            var seen: [String] = []
            var notFound: [String] = []
            var wrong = false
            let opensApp =
                matcher.map { $0.match("https://\(observation.target.host)\(path)", explainingMisses: false).app != nil } ?? false
            for (visitor, exchange) in clicks {
                guard let response = exchange.response else {
                    findings.append(
                        CheckFinding(.error, "check.link-failed", "GET \(path) as \(visitor): \(exchange.failure ?? "no answer")")
                    )
                    wrong = true
                    continue
                }
                let location = response.header("Location")
                seen.append("\(visitor) \(response.status)" + (location.map { " → \($0)" } ?? ""))
                let body = String(decoding: exchange.decodedBody ?? [], as: UTF8.self)
                let evidence = "GET \(path) (User-Agent: \(visitor)): \(response.status)" + (location.map { ", Location: \($0)" } ?? "")
                if response.status == 404 {
                    notFound.append(visitor)
                    wrong = true
                    continue
                }
                if visitor == "link preview", (300..<400).contains(response.status) {
                    findings.append(
                        CheckFinding(
                            .error,
                            "check.link-crawler-redirect",
                            "a link preview fetcher is redirected, so Slack, iMessage and others show the destination's preview (often a "
                                + "store page), not the link's: answer crawlers 200 with Open Graph tags",
                            evidence: evidence
                        )
                    )
                    wrong = true
                }
                if let location, let destinations, !(CheckedURL(location).map(destinations.allows) ?? false) {
                    findings.append(
                        CheckFinding(
                            .error,
                            "check.link-off-allowlist",
                            "\(visitor) is sent to \(location), which the config neither allows (links.allow) nor names in a rule or "
                                + "openHost: a redirect the domain never vouched for (an open redirect, or a fallback gone stale)",
                            evidence: evidence
                        )
                    )
                    wrong = true
                }
                if let location, let problem = storeProblem(location) {
                    findings.append(CheckFinding(.error, "check.link-store-id", problem, evidence: evidence))
                    wrong = true
                }
                if visitor == "iPhone", response.status == 200, response.header("Content-Type")?.hasPrefix("text/html") == true,
                    !body.contains("apple-itunes-app")
                {
                    findings.append(
                        CheckFinding(
                            .warning,
                            "check.link-no-banner",
                            "the page an iPhone without the app gets has no Smart App Banner (<meta name=\"apple-itunes-app\" content=\"app-id=…, "
                                + "app-argument=…\">): Safari then offers no install that returns to the link",
                            evidence: evidence
                        )
                    )
                    wrong = true
                }
                if visitor == "link preview", response.status == 200, !body.contains("og:title") {
                    findings.append(
                        CheckFinding(
                            .warning,
                            "check.link-preview-tags",
                            "the page a link preview fetcher gets has no og:title: previews show the bare URL; add Open Graph tags",
                            evidence: evidence
                        )
                    )
                    wrong = true
                }
            }
            if !notFound.isEmpty {
                // One cause, one finding: the visitors it hits are listed.
                let who = notFound.count == visitors.count ? "everyone" : notFound.joined(separator: ", ")
                findings.append(
                    CheckFinding(
                        .error,
                        "check.link-404",
                        opensApp
                            ? "\(path) opens the app for those who have it, and is a 404 for \(who) without it: add a link rule for it "
                                + "(a store, a fallback or the web)"
                            : "\(path) is a 404 for \(who): it is no link on this host; add a link rule, or check the path",
                        evidence: "GET \(path): 404"
                    )
                )
            }
            if !wrong {
                findings.append(CheckFinding(.pass, "check.link", "\(path) without the app: " + seen.joined(separator: "; ")))
            }
        }
        return findings
    }

    /// A store redirect that cannot open the app's page: the App Store without `id<digits>`, Google Play
    /// without the package.
    static func storeProblem(_ location: String) -> String? {
        let lower = location.lowercased()
        if lower.hasPrefix("https://apps.apple.com/") || lower.hasPrefix("https://itunes.apple.com/") {
            let path = lower.split(separator: "?").first.map(String.init) ?? lower
            let hasID = path.split(separator: "/").contains { $0.hasPrefix("id") && $0.count > 2 && $0.dropFirst(2).allSatisfy(\.isNumber) }
            return hasID ? nil : "the App Store redirect names no app (no /id<App Store ID> in \(location)): set the app's App Store ID"
        }
        if lower.hasPrefix("https://play.google.com/store/apps/details") {
            let query = lower.split(separator: "?", maxSplits: 1).dropFirst().first.map(String.init) ?? ""
            let hasID = query.split(separator: "&").contains { $0.hasPrefix("id=") && $0.count > 3 }
            return hasID ? nil : "the Play Store redirect names no app (no id=<package> in \(location)): set the app's package"
        }
        return nil
    }
}
