import AASA
import HTTP1
import Links

/// A site's link rules compiled once per load: what a request on a link path needs and nothing else.
final class CompiledLinks: Sendable {
    let links: SiteLinks
    let matcher: LinkMatcher
    let rules: [PreparedLinkRule]
    /// The site's own landing page, parsed when the config loaded.
    let landingPage: LandingPageTemplate?

    /// Paths a rule of the config names exactly (no wildcard, not an exclusion): such a rule wins over a
    /// stored short link with the same path, as `validate` says.
    let literalPaths: Set<String>

    init(_ links: SiteLinks, landingPage: LandingPageTemplate?) {
        self.links = links
        self.landingPage = landingPage
        matcher = LinkMatcher(rules: links.rules)
        rules = links.rules.map { PreparedLinkRule($0, app: links.app) }
        literalPaths = Set(
            links.rules.compactMap { rule in
                guard let path = rule.component.path, !rule.component.exclude, !path.contains(where: { $0 == "*" || $0 == "?" }) else {
                    return nil
                }
                return path
            }
        )
    }
}

/// A link path's response and what the metrics count of it. A class: the route that carries it stays as
/// small as the document routes'.
final class LinkAnswer: Sendable {
    let response: PreparedResponse
    /// ``Visitor/label``; "-" for what is the same for everyone (the stylesheet, a 405).
    let visitor: String
    /// ``LinkOutcome``'s raw value, "refused" (a 400), or "-".
    let outcome: String

    /// The stored short link answered, by ``StoredLink/id`` (its clicks are written to the link store); nil
    /// for config rules.
    let stored: Int64?
    /// The visitor and outcome a stored link's click is counted under (``ClickKinds``), worked out once
    /// per answer, so a cached answer's click costs no lookup.
    let clickKind: UInt16
    /// What the loop does with a claim code instead of sending `response` as it is (``ClaimAction``).
    let claim: ClaimAction?

    init(
        response: PreparedResponse,
        visitor: String,
        outcome: String,
        stored: Int64? = nil,
        claim: ClaimAction? = nil
    ) {
        self.response = response
        self.visitor = visitor
        self.outcome = outcome
        self.stored = stored
        clickKind = stored == nil ? 0 : ClickKinds.code(visitor: visitor, outcome: outcome)
        self.claim = claim
    }
}

/// A deferred deep link's step that needs the clock, randomness or the store, which routing has none of:
/// the event loop carries it out (EventLoop+Claims), the worker for what reads the store.
enum ClaimAction: Sendable, Equatable {
    /// A redirect to Google Play whose referrer is a fresh claim URL for the link.
    case playStore(package: String, domain: String, suffix: String)
    /// A fresh claim URL as text: the landing page's App Store button asks for it on the tap.
    case claimURL(domain: String, suffix: String)
    /// The app claims a code: the store says whether it is the first claim, and the deep link.
    case redeem(code: String, domain: String, platform: String)
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
        links: CompiledLinks,
        siteHosts: @autoclosure () -> [HostPattern],
        storedLinks: ShortLinkTable? = nil,
        cache: LinkAnswerCache? = nil
    ) -> LinkAnswer? {
        // One byte test keeps the server's own paths off the cost of every link (links never start with `/_/`).
        if path.count >= 3, path[1] == UInt8(ascii: "_"), path[2] == UInt8(ascii: "/") {
            return reserved(head, path: path, buffer: buffer, host: host, links: links, storedLinks: storedLinks, cache: cache)
        }
        let target = UnsafeBufferPointer(rebasing: buffer[head.targetRange])
        let visitor =
            head.userAgentRange.map { range in
                let userAgent = UnsafeBufferPointer(rebasing: buffer[range])
                return cache?.visitors.classify(userAgent, hash: head.userAgentHash) ?? Visitor.classify(userAgent)
            } ?? .desktop
        // GET and HEAD share an answer (HEAD is sent without the body); other methods are refused below.
        let cacheable = cache != nil && (head.method == .get || head.method == .head)
        if cacheable, let cached = cache?.answer(links: links, storedLinks: storedLinks, visitor: visitor, host: host, target: target) {
            return cached
        }
        let pathText = String(decoding: path, as: UTF8.self)
        let query = target.firstIndex(of: UInt8(ascii: "?")).map {
            String(decoding: UnsafeBufferPointer(rebasing: target[($0 + 1)...]), as: UTF8.self)
        }
        guard
            let answer = answer(
                head,
                pathText: pathText,
                query: query,
                host: host,
                visitor: visitor,
                links: links,
                storedLinks: storedLinks,
                siteHosts: siteHosts(),
                storedRules: cache?.storedRules
            )
        else { return nil }
        if cacheable { cache?.store(answer, links: links, storedLinks: storedLinks, visitor: visitor, host: host, target: target) }
        return answer
    }

    /// The reserved space `/_/`: the stylesheet, QR codes, claims and app events. Nil: no such path.
    /// Kept out of line: inlined, its code made every link's answer ~140 instructions dearer.
    @inline(never)
    private static func reserved(
        _ head: RequestHead,
        path: UnsafeBufferPointer<UInt8>,
        buffer: UnsafeBufferPointer<UInt8>,
        host: String,
        links: CompiledLinks,
        storedLinks: ShortLinkTable?,
        cache: LinkAnswerCache?
    ) -> LinkAnswer? {
        if Router.equal(path, stylesheetPath) {
            guard head.method == .get || head.method == .head else {
                return LinkAnswer(response: methodNotAllowed, visitor: "-", outcome: "-")
            }
            return LinkAnswer(response: stylesheet, visitor: "-", outcome: "-")
        }
        if path.count > ShortLinkQRCodes.prefix.count,
            Router.equal(UnsafeBufferPointer(rebasing: path[..<ShortLinkQRCodes.prefix.count]), ShortLinkQRCodes.prefix)
        {
            guard head.method == .get || head.method == .head else {
                return LinkAnswer(response: methodNotAllowed, visitor: "-", outcome: "-")
            }
            // The same image for every visitor: one cache entry, and no User-Agent read.
            let target = UnsafeBufferPointer(rebasing: buffer[head.targetRange])
            if let cached = cache?.answer(links: links, storedLinks: storedLinks, visitor: .desktop, host: host, target: target) {
                return cached
            }
            let name = String(decoding: UnsafeBufferPointer(rebasing: path[ShortLinkQRCodes.prefix.count...]), as: UTF8.self)
            let answer = LinkAnswer(
                response: ShortLinkQRCodes.answer(name, host: host, storedLinks: storedLinks),
                visitor: "-",
                outcome: "-"
            )
            cache?.store(answer, links: links, storedLinks: storedLinks, visitor: .desktop, host: host, target: target)
            return answer
        }
        return DeferredLinkRoutes.answer(head, path: path, buffer: buffer, host: host, storedLinks: storedLinks)
    }

    private static func answer(
        _ head: RequestHead,
        pathText: String,
        query: String?,
        host: String,
        visitor: Visitor,
        links: CompiledLinks,
        storedLinks: ShortLinkTable?,
        siteHosts: @autoclosure () -> [HostPattern],
        storedRules: StoredRuleMemo?
    ) -> LinkAnswer? {
        let request = LinkRequest(host: host, path: pathText, query: query, visitor: visitor)
        var refused: LinkAnswer { LinkAnswer(response: methodNotAllowed, visitor: visitor.label, outcome: "-") }
        if links.links.firebaseLongLinks, pathText == "/", let query, query.hasPrefix("link=") || query.contains("&link=") {
            guard head.method == .get || head.method == .head else { return refused }
            // The site's hosts, which a long link may not point back at: read only for long links.
            return firebaseLongLink(query, request, links, ownHosts: Set(siteHosts().map(\.description)))
        }
        if let storedLinks, storedLinks.count > 0, let stored = storedLinks.link(domain: host, path: pathText),
            !links.literalPaths.contains(pathText)
        {
            guard head.method == .get || head.method == .head else { return refused }
            return storedLink(
                stored,
                request,
                links,
                ownHosts: Set(siteHosts().map(\.description)),
                domainDisabled: storedLinks.disabledDomains.contains(stored.domain),
                claimKey: storedLinks.claimKey,
                rules: storedRules
            )
        }
        guard let found = links.matcher.match(path: pathText, query: query) else { return nil }
        guard head.method == .get || head.method == .head else { return refused }
        let decision = LinkRouting.decide(links.rules[found.rule], captures: found.captures, links: links.links, request: request)
        return LinkAnswer(response: response(decision, links), visitor: visitor.label, outcome: decision.outcome.rawValue)
    }

    /// A stored short link: its FDL parameters routed as a long link with them would be — checked against
    /// the site's allowlist as it is now — or 410 Gone when it, or its whole domain, was disabled.
    static func storedLink(
        _ stored: StoredLink,
        _ request: LinkRequest,
        _ links: CompiledLinks,
        ownHosts: @autoclosure () -> Set<String>,
        domainDisabled: Bool = false,
        claimKey: [UInt8]? = nil,
        rules: StoredRuleMemo? = nil
    ) -> LinkAnswer {
        guard stored.state == .active, !domainDisabled else {
            return LinkAnswer(
                response: html(status: 410, LinkPages.gone(), policy: pagePolicy),
                visitor: request.visitor.label,
                outcome: "gone",
                stored: stored.id
            )
        }
        // `?d=1`, FDL's preview link: the link's flow per visitor as a page.
        func make() -> Result<FirebaseLongLink.Parsed, FirebaseLongLink.Refusal> {
            FirebaseLongLink.rule(stored.parameters, links: links.links, ownHosts: ownHosts().union([request.host]))
        }
        let rule = rules?.rule(for: stored, host: request.host, links: links, make: make) ?? make()
        let parsed = rule.map {
            var parsed = $0
            parsed.debug = request.query == "d=1"
            return parsed
        }
        let answer = routed(parsed, request, links, claimPath: claimKey == nil ? nil : "/_/c/" + stored.suffix)
        var claim: ClaimAction?
        if claimKey != nil, request.visitor == .android, answer.outcome == LinkOutcome.store.rawValue,
            let package = links.links.app?.androidPackage
        {
            claim = .playStore(package: package, domain: stored.domain, suffix: stored.suffix)
        }
        return LinkAnswer(
            response: answer.response,
            visitor: answer.visitor,
            outcome: answer.outcome,
            stored: stored.id,
            claim: claim
        )
    }

    static func firebaseLongLink(_ query: String, _ request: LinkRequest, _ links: CompiledLinks, ownHosts: Set<String>) -> LinkAnswer {
        routed(FirebaseLongLink.parse(query: query, links: links.links, ownHosts: ownHosts.union([request.host])), request, links)
    }

    /// `claimPath`: a stored link's, for its page's App Store button (``LinkPageContent/claimPath``).
    private static func routed(
        _ parsed: Result<FirebaseLongLink.Parsed, FirebaseLongLink.Refusal>,
        _ request: LinkRequest,
        _ links: CompiledLinks,
        claimPath: String? = nil
    ) -> LinkAnswer {
        switch parsed {
        case .failure(let refusal):
            let page = html(status: 400, LinkPages.refusal(parameter: refusal.parameter, reason: refusal.reason), policy: pagePolicy)
            return LinkAnswer(response: page, visitor: request.visitor.label, outcome: "refused")
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
                let page = html(status: 200, LinkPages.flow(link: request.url, rows: rows), policy: pagePolicy)
                return LinkAnswer(response: page, visitor: request.visitor.label, outcome: "-")
            }
            var decision = LinkRouting.decide(parsed.rule, captures: [], links: links.links, request: request)
            if let claimPath, case .page(var content, let outcome) = decision {
                content.claimPath = claimPath
                decision = .page(content, outcome)
            }
            return LinkAnswer(response: response(decision, links), visitor: request.visitor.label, outcome: decision.outcome.rawValue)
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

    static func response(_ decision: LinkDecision, _ links: CompiledLinks) -> PreparedResponse {
        switch decision {
        case .redirect(let location, _):
            return PreparedResponse(shared: redirectHeaders, field: "Location", value: location)
        case .page(let content, _):
            let policy = LinkPages.contentSecurityPolicy(for: content, template: links.landingPage, imageOrigins: links.links.imageOrigins)
            return html(status: 200, LinkPages.render(content, template: links.landingPage), policy: policy)
        }
    }

    /// Every redirect's lines but its Location, kept once.
    static let redirectHeaders = SharedHeaders(
        status: 302,
        headers: [
            ("Server", "aasa-server"), ("Cache-Control", "private, no-store"), ("Vary", "User-Agent"), ("Referrer-Policy", "no-referrer"),
        ]
    )

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
