import AASA
import ConsolePages
import HTTP1
import Links

/// Which listener a request came in on: the main listeners serve documents, the admin listener serves
/// health, readiness, metrics and reloads.
enum ListenerRole: Sendable, Equatable {
    case main
    case admin
}

/// What a request was, for metrics and logs.
enum PathClass: UInt8, Sendable {
    case aasa
    case assetLinks
    case health
    case admin
    case link
    case other

    var label: String {
        switch self {
        case .aasa: return "aasa"
        case .assetLinks: return "assetlinks"
        case .health: return "health"
        case .admin: return "admin"
        case .link: return "link"
        case .other: return "other"
        }
    }
}

/// What the router decided for a request.
enum Route {
    /// `site`: the metrics label — the config host that matched (exact, or `*.suffix`), "unknown", or "-"
    /// for requests that are not about a host (health, the admin listener).
    case respond(PreparedResponse, site: String, pathClass: PathClass)
    /// `POST /reload` on the admin listener: answered once the reload is done.
    case reload
    /// `GET /.well-known/acme-challenge/<token>`: answered from the certificate manager's waiting orders
    /// (RFC 8555 §8.3), on plain connections only.
    case acmeChallenge(token: String)
    /// `POST /certificates/retry/<host>` on the admin listener: an order now, backoff forgotten.
    case retryCertificate(host: String)
    /// A link path's answer, counted by visitor class and outcome.
    case link(LinkAnswer, site: String)
    /// A call of the link API on the admin listener: answered by its worker, off the loop. Boxed: a call
    /// carries several strings, and inline they made destroying every route of every request dearer
    /// (29 instructions per AASA request, request-instructions.py).
    indirect case linkAPI(ShortLinkAPI.Call, token: APIToken)
}

/// What the admin routes report, read only when an admin request asks for it.
struct AdminView {
    var isDraining: Bool
    var lastReloadFailed: Bool
    var metrics: () -> String
    /// `/status` (nil: every recorded host) or `/status/<host>` as JSON; nil when the config does not
    /// serve that host.
    var status: (String?) -> [UInt8]?
    /// A console page (path, query string); nil when there is no such page or host; throws when the page
    /// cannot be put together, which answers 500 for that request alone.
    var console: (String, String) throws(ConsoleRenderer.Failure) -> ConsoleRenderer.Answer?
}

/// Every route of both listeners, in one place, with no I/O: a request head and its bytes in, a decision
/// out (tested without a socket in `RouterTests`). The AASA path allocates nothing but the host name.
enum Router {
    // Literals, not arrays: every request compares its path with these, and a global array is reached
    // through a one-time-initialisation check each time.
    static var wellKnownPath: StaticString { "/.well-known/apple-app-site-association" }
    static var rootPath: StaticString { "/apple-app-site-association" }
    static var assetLinksPath: StaticString { "/.well-known/assetlinks.json" }
    static let reloadPath: [UInt8] = Array("/reload".utf8)
    static let retryPrefix: [UInt8] = Array("/certificates/retry/".utf8)
    static var acmeChallengePrefix: StaticString { "/.well-known/acme-challenge/" }

    static func route(
        _ head: RequestHead,
        in buffer: UnsafeBufferPointer<UInt8>,
        listener: ListenerRole,
        snapshot: Snapshot,
        admin: () -> AdminView,
        linkAnswers: LinkAnswerCache? = nil,
        storedLinks: ShortLinkTable? = nil,
        hosts: HostMemo? = nil
    ) -> Route {
        switch listener {
        case .main:
            return routeMainListener(head, in: buffer, snapshot: snapshot, linkAnswers: linkAnswers, storedLinks: storedLinks, hosts: hosts)
        case .admin:
            if let answer = routeAnyListener(head, listener) { return answer }
            return routeAdmin(head, UnsafeBufferPointer(rebasing: buffer[head.pathRange]), buffer, snapshot, admin)
        }
    }

    /// ``route(_:in:listener:snapshot:admin:linkAnswers:storedLinks:hosts:)`` for the main listeners, which
    /// never ask for the admin view: the event loop calls this one without making that closure, which
    /// retained the loop twice a request.
    static func routeMainListener(
        _ head: RequestHead,
        in buffer: UnsafeBufferPointer<UInt8>,
        snapshot: Snapshot,
        linkAnswers: LinkAnswerCache? = nil,
        storedLinks: ShortLinkTable? = nil,
        hosts: HostMemo? = nil
    ) -> Route {
        if let answer = routeAnyListener(head, .main) { return answer }
        let path = UnsafeBufferPointer(rebasing: buffer[head.pathRange])
        return routeMain(head, path, buffer, snapshot, linkAnswers, storedLinks, hosts)
    }

    /// What every listener answers the same way, whatever the path.
    private static func routeAnyListener(_ head: RequestHead, _ listener: ListenerRole) -> Route? {
        if head.method == .unknown {
            return .respond(StandardResponses.notImplemented, site: "-", pathClass: .other)
        }
        if head.isAsteriskForm {
            // The parser admits '*' only with OPTIONS.
            let answer = listener == .admin ? StandardResponses.adminOptions : StandardResponses.serverOptions
            return .respond(answer, site: "-", pathClass: .other)
        }
        return nil
    }

    private static func routeMain(
        _ head: RequestHead,
        _ path: UnsafeBufferPointer<UInt8>,
        _ buffer: UnsafeBufferPointer<UInt8>,
        _ snapshot: Snapshot,
        _ linkAnswers: LinkAnswerCache?,
        _ storedLinks: ShortLinkTable?,
        _ hosts: HostMemo?
    ) -> Route {
        if equal(path, wellKnownPath) || equal(path, rootPath) {
            guard head.method == .get || head.method == .head else {
                return .respond(StandardResponses.methodNotAllowed, site: "-", pathClass: .aasa)
            }
            let matched = matchHost(head, buffer, snapshot, hosts)
            // An Android-only site has no AASA: its hosts get what an unknown host gets.
            if let matched, let response = snapshot.appleResponse(at: matched.value, gzip: head.acceptsGzip) {
                return .respond(response, site: matched.entry, pathClass: .aasa)
            }
            guard let response = snapshot.unknownHost?.appleResponse(gzip: head.acceptsGzip) else {
                return .respond(StandardResponses.notFound, site: matched?.entry ?? "unknown", pathClass: .aasa)
            }
            return .respond(response, site: matched?.entry ?? "unknown", pathClass: .aasa)
        }
        if equal(path, assetLinksPath) {
            guard head.method == .get || head.method == .head else {
                return .respond(StandardResponses.methodNotAllowed, site: "-", pathClass: .assetLinks)
            }
            let matched = matchHost(head, buffer, snapshot, hosts)
            // 404, not an empty list: an empty statement list would claim this host links no app.
            guard let matched, let document = snapshot.site(at: matched.value).assetLinks else {
                return .respond(StandardResponses.noAssetLinks, site: matched?.entry ?? "unknown", pathClass: .assetLinks)
            }
            let response = head.acceptsGzip ? document.gzip?.response() ?? document.identity : document.identity
            return .respond(response, site: matched.entry, pathClass: .assetLinks)
        }
        if let health = snapshot.healthPath, equal(path, health) {
            guard head.method == .get || head.method == .head else {
                return .respond(StandardResponses.methodNotAllowed, site: "-", pathClass: .health)
            }
            return .respond(StandardResponses.health, site: "-", pathClass: .health)
        }
        for file in snapshot.published where equal(path, file.path) {
            guard head.method == .get || head.method == .head else {
                return .respond(StandardResponses.methodNotAllowed, site: "-", pathClass: .other)
            }
            return .respond(file.response, site: "-", pathClass: .other)
        }
        if path.count > acmeChallengePrefix.utf8CodeUnitCount,
            equal(UnsafeBufferPointer(rebasing: path[0..<acmeChallengePrefix.utf8CodeUnitCount]), acmeChallengePrefix)
        {
            guard head.method == .get || head.method == .head else {
                return .respond(StandardResponses.methodNotAllowed, site: "-", pathClass: .other)
            }
            return .acmeChallenge(
                token: String(decoding: UnsafeBufferPointer(rebasing: path[acmeChallengePrefix.utf8CodeUnitCount...]), as: UTF8.self)
            )
        }
        // Off the hot paths: a link, or a 404 counted under its host.
        // The host is normalized once here: the link answer needs it too.
        if let hosts, let range = head.hostRange {
            // The memo's match is read where it is: it stays until the memo's next lookup, after this request.
            guard let found = hosts.found(UnsafeBufferPointer(rebasing: buffer[range]), in: snapshot) else {
                return .respond(StandardResponses.notFound, site: "unknown", pathClass: .other)
            }
            return found._withUnsafeGuaranteedRef { found in
                routeLink(head, path, buffer, snapshot, found.match, linkAnswers, storedLinks)
            }
        }
        guard let matched = matchHost(head, buffer, snapshot, nil) else {
            return .respond(StandardResponses.notFound, site: "unknown", pathClass: .other)
        }
        return routeLink(head, path, buffer, snapshot, matched, linkAnswers, storedLinks)
    }

    /// A link of the matched site, or a 404 counted under its host.
    @inline(__always)
    private static func routeLink(
        _ head: RequestHead,
        _ path: UnsafeBufferPointer<UInt8>,
        _ buffer: UnsafeBufferPointer<UInt8>,
        _ snapshot: Snapshot,
        _ matched: borrowing HostMatch,
        _ linkAnswers: LinkAnswerCache?,
        _ storedLinks: ShortLinkTable?
    ) -> Route {
        let answer = snapshot.withSite(at: matched.value) { site -> LinkAnswer? in
            guard let links = site.links else { return nil }
            return LinkResponder.respond(
                head,
                path: path,
                buffer: buffer,
                host: matched.name,
                links: links,
                siteHosts: site.hosts,
                storedLinks: storedLinks,
                cache: linkAnswers
            )
        }
        guard let answer else { return .respond(StandardResponses.notFound, site: matched.entry, pathClass: .other) }
        return .link(answer, site: matched.entry)
    }

    /// The site for the request's Host and the config entry that matched it (the exact host, or the
    /// `*.suffix` pattern): the `host` label of `aasa_requests_total`, bounded by the config.
    private static func matchHost(
        _ head: RequestHead,
        _ buffer: UnsafeBufferPointer<UInt8>,
        _ snapshot: Snapshot,
        _ hosts: HostMemo?
    ) -> HostMatch? {
        guard let range = head.hostRange else { return nil }
        let header = UnsafeBufferPointer(rebasing: buffer[range])
        if let hosts { return hosts.match(header, in: snapshot) }
        return snapshot.hosts.match(hostHeader: header)
    }

    private static func routeAdmin(
        _ head: RequestHead,
        _ path: UnsafeBufferPointer<UInt8>,
        _ buffer: UnsafeBufferPointer<UInt8>,
        _ snapshot: Snapshot,
        _ admin: () -> AdminView
    ) -> Route {
        let policy = snapshot.adminPolicy
        // A browser page, whatever site it came from, must not drive the admin listener: every cross-origin
        // request a browser makes carries Origin, and nothing else that talks to this listener sends one.
        // One exception: the console's own form, posted by a page of this very listener — its Origin names
        // the Host the form is sent to, which a page elsewhere cannot make its browser say.
        let consoleForm = equal(path, consoleFormPath)
        if let origin = head.originRange {
            guard head.method == .post, consoleForm, let host = head.hostRange,
                isSameOrigin(UnsafeBufferPointer(rebasing: buffer[origin]), host: UnsafeBufferPointer(rebasing: buffer[host]))
            else {
                return .respond(AdminResponses.crossOrigin, site: "-", pathClass: .admin)
            }
        }
        // DNS rebinding points a name the attacker controls at 127.0.0.1; the browser then sends that name.
        // Without a token, only names that cannot be rebound are accepted.
        if policy.token == nil, let host = head.hostRange,
            !isRebindingSafe(HostTable<Int>.normalize(bytes: UnsafeBufferPointer(rebasing: buffer[host])))
        {
            return .respond(AdminResponses.foreignHost, site: "-", pathClass: .admin)
        }
        if path.count >= 4, equal(UnsafeBufferPointer(rebasing: path[0..<4]), "/v1/") {
            return routeLinkAPI(head, path, buffer, policy)
        }
        let isRetry = path.count > retryPrefix.count && equal(UnsafeBufferPointer(rebasing: path[0..<retryPrefix.count]), retryPrefix)
        // Both change state: the same rules (POST, the token, not read-only, no form).
        let isReload = equal(path, reloadPath) || isRetry
        let resource = AdminResource(path)
        if let token = policy.token, isReload || resource?.listsHosts == true,
            !bearerMatches(head.authorizationRange.map { UnsafeBufferPointer(rebasing: buffer[$0]) }, token)
        {
            return .respond(AdminResponses.unauthorized, site: "-", pathClass: .admin)
        }
        if isReload {
            guard head.method == .post else {
                return .respond(AdminResponses.usePost, site: "-", pathClass: .admin)
            }
            if policy.readOnly { return .respond(AdminResponses.readOnly, site: "-", pathClass: .admin) }
            // The content types a cross-site HTML form can send without a preflight.
            if let type = head.contentTypeRange, isSimpleFormType(UnsafeBufferPointer(rebasing: buffer[type])) {
                return .respond(AdminResponses.formContentType, site: "-", pathClass: .admin)
            }
            if isRetry {
                return .retryCertificate(host: String(decoding: UnsafeBufferPointer(rebasing: path[retryPrefix.count...]), as: UTF8.self))
            }
            return .reload
        }
        guard let resource else { return .respond(StandardResponses.notFound, site: "-", pathClass: .admin) }
        // Reachable from the network with no token: the pages that list every customer host and what
        // fetched it stay closed; probes keep health, readiness and metrics.
        if policy.readOnly, resource.isOperatorPage {
            return .respond(AdminResponses.exposedWithoutToken, site: "-", pathClass: .admin)
        }
        if consoleForm && head.method == .post {
            // What a browser sends for the console's form, and only that: a program creates links with the
            // link API, which takes JSON and a token.
            guard head.originRange != nil else { return .respond(AdminResponses.formWithoutOrigin, site: "-", pathClass: .admin) }
            guard let type = head.contentTypeRange, isURLEncodedForm(UnsafeBufferPointer(rebasing: buffer[type])) else {
                return .respond(AdminResponses.formType, site: "-", pathClass: .admin)
            }
            guard case .length = head.body else { return .respond(AdminResponses.lengthRequired, site: "-", pathClass: .admin) }
            // With an admin token the request has shown it already (the console needs it); else the worker
            // checks the token typed into the form.
            return .linkAPI(.consoleCreate, token: policy.token != nil ? .admin : .none)
        }
        guard head.method == .get || head.method == .head else {
            return .respond(StandardResponses.methodNotAllowed, site: "-", pathClass: .admin)
        }
        switch resource {
        case .health:
            return .respond(StandardResponses.health, site: "-", pathClass: .admin)
        case .readiness:
            let view = admin()
            return .respond(AdminResponses.readiness(view, generation: snapshot.generation), site: "-", pathClass: .admin)
        case .metrics:
            return .respond(AdminResponses.metrics(admin().metrics()), site: "-", pathClass: .admin)
        case .console(let page):
            let target = String(decoding: UnsafeBufferPointer(rebasing: buffer[head.targetRange]), as: UTF8.self)
            let query = target.firstIndex(of: "?").map { String(target[target.index(after: $0)...]) } ?? ""
            if let call = ConsoleLinkPage.call(path: page, query: query) {
                // A stored link's page reads the store: the link worker renders it, never the loop.
                return .linkAPI(call, token: .admin)
            }
            let found: ConsoleRenderer.Answer?
            do {
                found = try admin().console(page, query)
            } catch {
                return .respond(AdminResponses.consoleFailed(error), site: "-", pathClass: .admin)
            }
            guard let answer = found else {
                return .respond(AdminResponses.noConsolePage, site: "-", pathClass: .admin)
            }
            return .respond(AdminResponses.console(answer), site: "-", pathClass: .admin)
        case .status(let host):
            guard let body = admin().status(host) else {
                return .respond(AdminResponses.unknownStatusHost, site: "-", pathClass: .admin)
            }
            return .respond(AdminResponses.status(body), site: "-", pathClass: .admin)
        }
    }

    /// `localhost` or an IP literal: names no attacker can point somewhere else.
    static func isRebindingSafe(_ host: String) -> Bool {
        if host == "localhost" { return true }
        if host.hasPrefix("[") && host.hasSuffix("]") { return ServerSettings.isIPLiteral(String(host.dropFirst().dropLast())) }
        return ServerSettings.isIPLiteral(host)
    }

    /// `Authorization: Bearer <token>`, compared in constant time.
    /// The link API: always behind the admin token (it creates what strangers would click), JSON bodies only.
    private static func routeLinkAPI(
        _ head: RequestHead,
        _ path: UnsafeBufferPointer<UInt8>,
        _ buffer: UnsafeBufferPointer<UInt8>,
        _ policy: AdminPolicy
    ) -> Route {
        func problem(_ problem: ShortLinkAPI.Problem, _ extra: [(String, String)] = []) -> Route {
            .respond(AdminResponses.problem(problem, extraHeaders: extra), site: "-", pathClass: .admin)
        }
        guard policy.token != nil || policy.linkAPIToken != nil else {
            return problem(
                ShortLinkAPI.Problem(
                    status: 403,
                    title: "No API token",
                    detail:
                        "the link API needs a token: set server.linkAPI.tokenFile (or adminTokenFile) and send Authorization: Bearer <its token>"
                )
            )
        }
        let authorization = head.authorizationRange.map { UnsafeBufferPointer(rebasing: buffer[$0]) }
        let token: APIToken
        if let linkAPIToken = policy.linkAPIToken, bearerMatches(authorization, linkAPIToken) {
            token = .linkAPI
        } else if let adminToken = policy.token, bearerMatches(authorization, adminToken) {
            token = .admin
        } else {
            return problem(
                ShortLinkAPI.Problem(
                    status: 401,
                    title: "Unauthorized",
                    detail: "send Authorization: Bearer <the token in server.linkAPI.tokenFile or adminTokenFile>"
                ),
                [("WWW-Authenticate", "Bearer realm=\"aasa-server admin\"")]
            )
        }
        let pathText = String(decoding: path, as: UTF8.self)
        let target = UnsafeBufferPointer(rebasing: buffer[head.targetRange])
        let query = target.firstIndex(of: UInt8(ascii: "?")).map {
            String(decoding: UnsafeBufferPointer(rebasing: target[($0 + 1)...]), as: UTF8.self)
        }
        switch ShortLinkAPI.call(method: head.method.name, path: pathText, query: query) {
        case nil:
            return problem(ShortLinkAPI.Problem(status: 404, title: "Not found", detail: "the link API has no \(pathText)"))
        case .failure(let refusal)?:
            return problem(refusal)
        case .success(let call)?:
            if call.takesBody {
                let type = head.contentTypeRange.map { String(decoding: UnsafeBufferPointer(rebasing: buffer[$0]), as: UTF8.self) }
                guard let type, type.lowercased().hasPrefix("application/json") else {
                    return problem(
                        ShortLinkAPI.Problem(
                            status: 415,
                            title: "Unsupported media type",
                            detail: "send the body as Content-Type: application/json"
                        )
                    )
                }
                guard case .length = head.body else {
                    return problem(
                        ShortLinkAPI.Problem(
                            status: 411,
                            title: "Length required",
                            detail: "send the body with a Content-Length, not chunked"
                        )
                    )
                }
            }
            return .linkAPI(call, token: token)
        }
    }

    static func bearerMatches(_ value: UnsafeBufferPointer<UInt8>?, _ token: [UInt8]) -> Bool {
        guard let value else { return false }
        let scheme = Array("bearer ".utf8)
        guard value.count == scheme.count + token.count else { return false }
        var difference: UInt8 = 0
        for index in 0..<scheme.count {
            let byte = value[index]
            difference |= (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte | 0x20 : byte) ^ scheme[index]
        }
        for index in 0..<token.count { difference |= value[scheme.count + index] ^ token[index] }
        return difference == 0
    }

    /// `application/x-www-form-urlencoded`, `multipart/form-data`, `text/plain` (any parameters, any case).
    static let consoleFormPath = Array(LinkFormPage.path.utf8)

    /// `Origin: http://HOST` or `https://HOST` where HOST is the request's own Host value (compared without
    /// regard to case): the page that sent it was served by this listener under that name.
    static func isSameOrigin(_ origin: UnsafeBufferPointer<UInt8>, host: UnsafeBufferPointer<UInt8>) -> Bool {
        let text = String(decoding: origin, as: UTF8.self).lowercased()
        let name = String(decoding: host, as: UTF8.self).lowercased()
        return !name.isEmpty && (text == "http://" + name || text == "https://" + name)
    }

    /// `application/x-www-form-urlencoded`, with parameters or without.
    static func isURLEncodedForm(_ value: UnsafeBufferPointer<UInt8>) -> Bool {
        var end = value.firstIndex(of: UInt8(ascii: ";")) ?? value.count
        while end > 0 && (value[end - 1] == 0x20 || value[end - 1] == 0x09) { end -= 1 }
        return String(decoding: UnsafeBufferPointer(rebasing: value[0..<end]), as: UTF8.self).lowercased()
            == "application/x-www-form-urlencoded"
    }

    static func isSimpleFormType(_ value: UnsafeBufferPointer<UInt8>) -> Bool {
        var end = value.firstIndex(of: UInt8(ascii: ";")) ?? value.count
        while end > 0 && (value[end - 1] == 0x20 || value[end - 1] == 0x09) { end -= 1 }
        let type = String(decoding: UnsafeBufferPointer(rebasing: value[0..<end]), as: UTF8.self).lowercased()
        return type == "application/x-www-form-urlencoded" || type == "multipart/form-data" || type == "text/plain"
    }

    private enum AdminResource: Equatable {
        case health, readiness, metrics
        case status(String?)
        /// `/console`, its stylesheet and its host pages.
        case console(String)

        /// The console and `/status`: for an operator, never for whoever can reach an exposed port.
        var isOperatorPage: Bool {
            switch self {
            case .status, .console: return true
            case .health, .readiness, .metrics: return false
            }
        }

        /// What names the config's hosts is for the token holder alone, when there is a token.
        var listsHosts: Bool {
            switch self {
            case .metrics, .status, .console: return true
            case .health, .readiness: return false
            }
        }

        init?(_ path: UnsafeBufferPointer<UInt8>) {
            if equal(path, Array("/healthz".utf8)) {
                self = .health
            } else if equal(path, Array("/readyz".utf8)) {
                self = .readiness
            } else if equal(path, Array("/metrics".utf8)) {
                self = .metrics
            } else if equal(path, Array("/console".utf8))
                || (path.count > 9 && equal(UnsafeBufferPointer(rebasing: path[0..<9]), Array("/console/".utf8)))
            {
                self = .console(String(decoding: path, as: UTF8.self))
            } else if equal(path, Array("/status".utf8)) {
                self = .status(nil)
            } else if path.count > 8, equal(UnsafeBufferPointer(rebasing: path[0..<8]), Array("/status/".utf8)) {
                self = .status(HostTable<Int>.normalize(bytes: UnsafeBufferPointer(rebasing: path[8...])))
            } else {
                return nil
            }
        }
    }

    @inline(__always)
    static func equal(_ a: UnsafeBufferPointer<UInt8>, _ b: StaticString) -> Bool {
        ByteComparison.equal(UnsafeRawBufferPointer(a), UnsafeRawBufferPointer(start: b.utf8Start, count: b.utf8CodeUnitCount))
    }

    @inline(__always)
    static func equal(_ a: UnsafeBufferPointer<UInt8>, _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        return b.withUnsafeBufferPointer { b in
            for index in 0..<a.count where a[index] != b[index] { return false }
            return true
        }
    }
}

/// The admin listener's answers.
enum AdminResponses {
    static let usePost = StandardResponses.error(
        status: 405,
        "use POST (POST /reload, POST /certificates/retry/HOST)",
        extraHeaders: [("Allow", "POST")]
    )
    static let formWithoutOrigin = StandardResponses.error(
        status: 403,
        "the console's form is posted by a browser, which names the page's origin; programs create links with the link API (POST /v1/links)"
    )
    static let formType = StandardResponses.error(
        status: 415,
        "the console's form is sent as application/x-www-form-urlencoded; programs create links with the link API (POST /v1/links)"
    )
    static let lengthRequired = StandardResponses.error(status: 411, "send the form with a Content-Length, not chunked")

    /// After the console's form created a link: to its page (a path of this listener, made by the server).
    static func seeOther(_ path: String) -> PreparedResponse {
        PreparedResponse(
            status: 303,
            headers: [
                ("Server", "aasa-server"), ("Location", path), ("Content-Type", "text/plain; charset=utf-8"), ("Cache-Control", "no-store"),
            ],
            body: Array("created: \(path)\n".utf8)
        )
    }

    static let crossOrigin = StandardResponses.error(
        status: 403,
        "cross-origin requests are refused: the admin listener is for tools and probes, not web pages (the request carried Origin)"
    )
    static let foreignHost = StandardResponses.error(
        status: 403,
        "the admin listener answers only Host: localhost or an IP address (protection against DNS rebinding); "
            + "set adminTokenFile to reach it by name"
    )
    /// An RFC 9457 problem document.
    static func problem(_ problem: ShortLinkAPI.Problem, extraHeaders: [(String, String)] = []) -> PreparedResponse {
        PreparedResponse(
            status: problem.status,
            headers: [("Content-Type", "application/problem+json"), ("Cache-Control", "no-store")] + extraHeaders,
            body: Array((problem.json + "\n").utf8)
        )
    }

    static let unauthorized = StandardResponses.error(
        status: 401,
        "this admin request needs Authorization: Bearer <the token in adminTokenFile>",
        extraHeaders: [("WWW-Authenticate", "Bearer realm=\"aasa-server admin\"")]
    )
    static let readOnly = StandardResponses.error(
        status: 403,
        "the admin listener is exposed read-only (adminExposed without adminTokenFile): reload with SIGHUP, a file change, "
            + "or set adminTokenFile"
    )
    static let exposedWithoutToken = StandardResponses.error(
        status: 403,
        "the console and /status are closed on an admin listener exposed without a token (adminExposed without "
            + "adminTokenFile): set adminTokenFile, or reach them on a loopback admin address"
    )
    static let formContentType = StandardResponses.error(
        status: 415,
        "POST /reload takes no form: send it without a body, or with Content-Type: application/json"
    )

    static func readiness(_ view: AdminView, generation: Int) -> PreparedResponse {
        if view.isDraining { return StandardResponses.json(status: 503, #"{"status":"draining"}"#) }
        return StandardResponses.json(
            status: 200,
            "{\"status\":\"ready\",\"generation\":\(generation),\"lastReloadFailed\":\(view.lastReloadFailed)}"
        )
    }

    static let unknownStatusHost = StandardResponses.json(
        status: 404,
        #"{"error":"the config serves no such host; /status lists the hosts a known fetcher has fetched"}"#
    )

    static let noConsolePage = PreparedResponse(
        status: 404,
        headers: [("Server", "aasa-server"), ("Content-Type", "text/plain; charset=utf-8"), ("Cache-Control", "no-store")],
        body: Array("no such console page, or the config serves no such host; the hosts are listed at /console\n".utf8)
    )

    static func consoleFailed(_ failure: ConsoleRenderer.Failure) -> PreparedResponse {
        PreparedResponse(
            status: 500,
            headers: [("Server", "aasa-server"), ("Content-Type", "text/plain; charset=utf-8"), ("Cache-Control", "no-store")],
            body: Array("the console could not show this page (\(failure.reason)); the server goes on serving\n".utf8)
        )
    }

    /// Console pages: no script, no outside asset, never framed, never cached (they show live state). The
    /// referrer goes to this listener only: with none at all a browser would post the console's form with
    /// `Origin: null`, which the listener cannot tell from a page elsewhere.
    static func console(_ answer: ConsoleRenderer.Answer) -> PreparedResponse {
        PreparedResponse(
            status: answer.status,
            headers: [
                ("Server", "aasa-server"), ("Content-Type", answer.contentType), ("Cache-Control", "no-store"),
                ("Content-Security-Policy", ConsolePage.contentSecurityPolicy), ("X-Content-Type-Options", "nosniff"),
                ("Referrer-Policy", "same-origin"),
            ],
            body: answer.body
        )
    }

    static func status(_ body: [UInt8]) -> PreparedResponse {
        PreparedResponse(
            status: 200,
            headers: [("Server", "aasa-server"), ("Content-Type", "application/json"), ("Cache-Control", "no-store")],
            body: body
        )
    }

    static func metrics(_ text: String) -> PreparedResponse {
        PreparedResponse(
            status: 200,
            headers: [
                ("Server", "aasa-server"), ("Content-Type", "text/plain; version=0.0.4; charset=utf-8"), ("Cache-Control", "no-store"),
            ],
            body: Array(text.utf8)
        )
    }

    /// The answer to `POST /reload`: 200 with what changed, or 422 with why the config was refused.
    static func reload(_ outcome: ReloadOutcome) -> PreparedResponse {
        StandardResponses.json(status: outcome.isSuccess ? 200 : 422, outcome.json)
    }
}
