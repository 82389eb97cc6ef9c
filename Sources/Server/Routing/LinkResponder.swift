import AASA
import HTTP1
import Links

/// A site's link rules compiled once per load: what a request on a link path needs and nothing else.
final class CompiledLinks: Sendable {
    let links: SiteLinks
    let matcher: LinkMatcher
    /// The site's hosts: an FDL long link may not point back at them.
    let ownHosts: Set<String>

    init(_ links: SiteLinks, hosts: [HostPattern]) {
        self.links = links
        matcher = LinkMatcher(rules: links.rules)
        ownHosts = Set(hosts.map(\.description))
    }
}

/// Answers the link paths of a site (docs/links.md): the rule that matches, the visitor from the
/// User-Agent, the pure routing decision, then the response. Nil: no link here (the caller's 404).
enum LinkResponder {
    static let stylesheetPath = Array(ReservedPaths.stylesheet.utf8)

    static func respond(
        _ head: RequestHead,
        path: UnsafeBufferPointer<UInt8>,
        buffer: UnsafeBufferPointer<UInt8>,
        host: String,
        links: CompiledLinks
    ) -> PreparedResponse? {
        if Router.equal(path, stylesheetPath) {
            guard head.method == .get || head.method == .head else { return methodNotAllowed }
            return stylesheet
        }
        let pathText = String(decoding: path, as: UTF8.self)
        let target = UnsafeBufferPointer(rebasing: buffer[head.targetRange])
        let query = target.firstIndex(of: UInt8(ascii: "?")).map {
            String(decoding: UnsafeBufferPointer(rebasing: target[($0 + 1)...]), as: UTF8.self)
        }
        let visitor = head.userAgentRange.map { Visitor.classify(UnsafeBufferPointer(rebasing: buffer[$0])) } ?? .desktop
        let request = LinkRequest(host: host, path: pathText, query: query, visitor: visitor)
        if links.links.firebaseLongLinks, pathText == "/", let query, query.hasPrefix("link=") || query.contains("&link=") {
            guard head.method == .get || head.method == .head else { return methodNotAllowed }
            return firebaseLongLink(query, request, links)
        }
        guard let found = links.matcher.match(path: pathText, query: query) else { return nil }
        guard head.method == .get || head.method == .head else { return methodNotAllowed }
        let decision = LinkRouting.decide(links.links.rules[found.rule], captures: found.captures, links: links.links, request: request)
        return response(decision)
    }

    static func firebaseLongLink(_ query: String, _ request: LinkRequest, _ links: CompiledLinks) -> PreparedResponse {
        switch FirebaseLongLink.parse(query: query, links: links.links, ownHosts: links.ownHosts.union([request.host])) {
        case .failure(let refusal):
            return html(status: 400, LinkPages.refusal(parameter: refusal.parameter, reason: refusal.reason), policy: pagePolicy)
        case .success(let parsed):
            if parsed.debug {
                let rows = LinkFlow.flow(
                    parsed.rule,
                    captures: [],
                    links: links.links,
                    host: request.host,
                    path: request.path,
                    query: request.query
                )
                return html(status: 200, LinkPages.flow(link: request.url, rows: rows), policy: pagePolicy)
            }
            return response(LinkRouting.decide(parsed.rule, captures: [], links: links.links, request: request))
        }
    }

    /// The refusal and flow pages show no image.
    static let pagePolicy =
        "default-src 'none'; style-src 'self'; img-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

    static func html(status: Int, _ body: String, policy: String) -> PreparedResponse {
        PreparedResponse(
            status: status,
            headers: [
                ("Server", "aasa-server"), ("Content-Type", "text/html; charset=utf-8"), ("Cache-Control", "private, no-store"),
                ("Vary", "User-Agent"), ("Content-Security-Policy", policy), ("X-Content-Type-Options", "nosniff"),
                ("Referrer-Policy", "no-referrer"),
            ],
            body: Array(body.utf8)
        )
    }

    static func response(_ decision: LinkDecision) -> PreparedResponse {
        switch decision {
        case .redirect(let location, _):
            return PreparedResponse(
                status: 302,
                headers: [
                    ("Server", "aasa-server"), ("Location", location), ("Cache-Control", "private, no-store"), ("Vary", "User-Agent"),
                    ("Referrer-Policy", "no-referrer"), ("Content-Type", "text/plain; charset=utf-8"),
                ],
                body: Array("redirecting to \(location)\n".utf8)
            )
        case .page(let content, _):
            return html(status: 200, LinkPages.render(content), policy: LinkPages.contentSecurityPolicy(for: content))
        }
    }

    static let methodNotAllowed = StandardResponses.error(
        status: 405,
        "a link answers GET and HEAD only",
        extraHeaders: [("Allow", "GET, HEAD")]
    )

    /// The same for everyone: cached a day.
    static let stylesheet = PreparedResponse(
        status: 200,
        headers: [
            ("Server", "aasa-server"), ("Content-Type", "text/css; charset=utf-8"), ("Cache-Control", "public, max-age=86400"),
            ("X-Content-Type-Options", "nosniff"),
        ],
        body: Array(LinkPages.stylesheet.utf8)
    )
}
