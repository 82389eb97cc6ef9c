public import AASA
import Support

/// The link API on the admin listener (docs/short-links.md), as pure functions: which call a request is,
/// whether a creation request may be stored (the domain is a link domain of the config, every destination
/// on its allowlist), and the JSON of every answer — FDL's shape for `POST /v1/shortLinks`, so a backend
/// that called Firebase changes only its base URL, and RFC 9457 problem documents for every refusal.
public enum ShortLinkAPI {
    public enum Call: Sendable, Equatable {
        /// `POST /v1/shortLinks` with FDL's request body.
        case create
        /// `POST /v1/links` with the API's own body (``NativeLinkRequest``).
        case createNative
        /// `GET /v1/links/<domain>/<suffix>`.
        case read(domain: String, suffix: String)
        /// `GET /v1/links?domain=HOST&after=HOST/SUFFIX&limit=N`: live links in order of domain and suffix, a
        /// page at a time (`next` names where the following page starts); `after` empty: from the first.
        case list(domain: String?, afterDomain: String, afterSuffix: String, limit: Int)
        /// `GET /v1/links/<domain>/<suffix>/history`: every change of the link, oldest first.
        case history(domain: String, suffix: String)
        /// `GET /v1/links/<domain>/<suffix>/clicks?days=N`: the counts per day, visitor class, outcome and
        /// HEAD, as `links stats --json` prints them.
        case clicks(domain: String, suffix: String, days: Int)
        /// `POST /v1/links/<domain>/<suffix>/disable` or `/enable`, `DELETE /v1/links/<domain>/<suffix>`.
        case change(domain: String, suffix: String, StoredLink.State)
        /// `PATCH /v1/links/<domain>/<suffix>` with `{"parameters": {NAME: VALUE or null}}` (a JSON merge patch).
        case update(domain: String, suffix: String)
        /// FDL's `GET /v1/<URL-encoded short link>/linkStats?durationDays=N`, or
        /// `GET /v1/links/<domain>/<suffix>/linkStats?durationDays=N`.
        case stats(domain: String, suffix: String, days: Int)
        /// `GET /v1/domains/<domain>`: whether the domain's kill switch is off.
        case domainState(domain: String)
        /// `POST /v1/domains/<domain>/disable` or `/enable`: every stored link of the domain answers 410
        /// Gone, or answers again.
        case domainSwitch(domain: String, disabled: Bool)
        /// `GET /_/claim/<code>` on a link domain (no token: the app calls it): the deep link, once.
        case claim(code: String, domain: String, platform: String)
        /// `GET /console/link/<domain>/<suffix>?days=N` on the admin listener: the console's page of the link
        /// (HTML), for an operator.
        case consolePage(domain: String, suffix: String, days: Int)
        /// `GET /console/links/new`: the console's form for a new link.
        case consoleForm
        /// `POST /console/links/new` from the console's own form (``ConsoleLinkForm``): a link, then its page.
        case consoleCreate

        /// The call reads a JSON body (sent with a Content-Length).
        public var takesBody: Bool {
            switch self {
            case .create, .createNative, .update, .consoleCreate: return true
            default: return false
            }
        }
    }

    /// FDL's default when `durationDays` is missing is an error; a week is asked most.
    public static let statsDayLimit = 3_650
    /// Links per page of `GET /v1/links`: by default, and at most.
    public static let pageSize = 1_000
    public static let pageLimit = 10_000

    /// A refusal: its status, a title, what exactly is wrong, and where in the request body when it is there.
    public struct Problem: Error, Sendable, Equatable {
        public var status: Int
        public var title: String
        public var detail: String
        public var path: String?

        public init(status: Int, title: String, detail: String, path: String? = nil) {
            self.status = status
            self.title = title
            self.detail = detail
            self.path = path
        }

        /// `application/problem+json` (RFC 9457), with the JSON path of the offending value as an extension.
        public var json: String {
            var members: [(String, JSONOutput)] = [
                ("type", .string("about:blank")), ("title", .string(title)), ("status", .int(status)), ("detail", .string(detail)),
            ]
            if let path { members.append(("path", .string(path))) }
            return JSONWriter.string(.object(members))
        }
    }

    public static let prefix = "/v1/"

    /// The call a method and path (under ``prefix``) make; nil: no such resource. A known resource with the
    /// wrong method is a 405 problem.
    public static func call(method: String, path: String, query: String? = nil) -> Result<Call, Problem>? {
        guard path.hasPrefix(prefix) else { return nil }
        let parts = path.dropFirst(prefix.count).split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        func wrongMethod(_ allowed: String) -> Result<Call, Problem> {
            .failure(Problem(status: 405, title: "Method not allowed", detail: "\(path) answers \(allowed)"))
        }
        func days(_ name: String) -> Result<Int, Problem> {
            let given = (query ?? "").split(separator: "&").first { $0.hasPrefix("\(name)=") }?.dropFirst(name.count + 1)
            guard let given, let days = Int(given), days >= 1, days <= statsDayLimit else {
                return .failure(
                    Problem(
                        status: 400,
                        title: "Invalid \(name)",
                        detail: "\(name) must be a whole number of days from 1 to \(statsDayLimit)"
                    )
                )
            }
            return .success(days)
        }
        if parts.last == "linkStats" {
            let link: (domain: String, suffix: String)?
            switch parts.count {
            case 2: link = StoredLink.locate(percentDecode(parts[0]))
            case 4 where parts[0] == "links" && !parts[1].isEmpty && !parts[2].isEmpty: link = (parts[1].lowercased(), parts[2])
            default: link = nil
            }
            guard let link else { return nil }
            guard method == "GET" || method == "HEAD" else { return wrongMethod("GET") }
            return days("durationDays").map { .stats(domain: link.domain, suffix: link.suffix, days: $0) }
        }
        switch parts.count {
        case 1 where parts[0] == "shortLinks":
            return method == "POST" ? .success(.create) : wrongMethod("POST")
        case 1 where parts[0] == "links":
            switch method {
            case "POST": return .success(.createNative)
            case "GET", "HEAD": return listing(query ?? "")
            default: return wrongMethod("GET and POST")
            }
        case 2 where parts[0] == "domains" && !parts[1].isEmpty:
            return method == "GET" || method == "HEAD" ? .success(.domainState(domain: parts[1].lowercased())) : wrongMethod("GET")
        case 3 where parts[0] == "domains" && !parts[1].isEmpty && (parts[2] == "disable" || parts[2] == "enable"):
            guard method == "POST" else { return wrongMethod("POST") }
            return .success(.domainSwitch(domain: parts[1].lowercased(), disabled: parts[2] == "disable"))
        case 3 where parts[0] == "links" && !parts[1].isEmpty && !parts[2].isEmpty:
            switch method {
            case "GET", "HEAD": return .success(.read(domain: parts[1].lowercased(), suffix: parts[2]))
            case "DELETE": return .success(.change(domain: parts[1].lowercased(), suffix: parts[2], .deleted))
            case "PATCH": return .success(.update(domain: parts[1].lowercased(), suffix: parts[2]))
            default: return wrongMethod("GET, PATCH and DELETE")
            }
        case 4 where parts[0] == "links" && !parts[1].isEmpty && !parts[2].isEmpty && (parts[3] == "history" || parts[3] == "clicks"):
            guard method == "GET" || method == "HEAD" else { return wrongMethod("GET") }
            let (domain, suffix) = (parts[1].lowercased(), parts[2])
            guard parts[3] == "clicks" else { return .success(.history(domain: domain, suffix: suffix)) }
            return days("days").map { .clicks(domain: domain, suffix: suffix, days: $0) }
        case 4 where parts[0] == "links" && !parts[1].isEmpty && !parts[2].isEmpty && (parts[3] == "disable" || parts[3] == "enable"):
            guard method == "POST" else { return wrongMethod("POST") }
            return .success(.change(domain: parts[1].lowercased(), suffix: parts[2], parts[3] == "disable" ? .disabled : .active))
        default:
            return nil
        }
    }

    /// `GET /v1/links`'s query: `domain`, `after` (the last link of the page before, `HOST/SUFFIX`) and
    /// `limit`, each optional; anything else is refused by name.
    static func listing(_ query: String) -> Result<Call, Problem> {
        var domain: String?
        var after = (domain: "", suffix: "")
        var limit = pageSize
        for pair in query.split(separator: "&") {
            let name = pair.prefix { $0 != "=" }
            let value = percentDecode(String(pair.dropFirst(name.count + 1)))
            switch name {
            case "domain" where !value.isEmpty: domain = value.lowercased()
            case "after":
                guard let link = StoredLink.locate(value) else {
                    return .failure(Problem(status: 400, title: "Invalid after", detail: "after names a link as HOST/SUFFIX"))
                }
                after = link
            case "limit":
                guard let number = Int(value), number >= 1, number <= pageLimit else {
                    return .failure(
                        Problem(status: 400, title: "Invalid limit", detail: "limit is a number of links from 1 to \(pageLimit)")
                    )
                }
                limit = number
            default:
                return .failure(
                    Problem(status: 400, title: "Invalid query", detail: "GET /v1/links takes domain, after and limit, not '\(name)'")
                )
            }
        }
        return .success(.list(domain: domain, afterDomain: after.domain, afterSuffix: after.suffix, limit: limit))
    }

    /// How a new link's suffix is chosen.
    public enum SuffixChoice: Sendable, Equatable {
        /// 96 random bits (FDL's UNGUESSABLE), the default.
        case unguessable
        /// The shortest free suffix, at least 4 characters (FDL's SHORT).
        case short
        /// The one the request names.
        case alias(String)
    }

    /// What a creation request asks for, checked against the config.
    public struct Creation: Sendable, Equatable {
        public var domain: String
        public var parameters: [String: String]
        public var suffix: SuffixChoice
    }

    /// A creation body — FDL's (`native` false) or the API's own — read and checked: a link domain of
    /// `config` (a site with `links`), and parameters its allowlist and app accept: the same check a long
    /// link and the command line get.
    public static func creation(body: [UInt8], config: LoadedConfig, native: Bool = false) -> Result<Creation, Problem> {
        let creation: Creation
        let domainPath: String
        let parameterPath: (String) -> String
        func invalid(_ problem: FirebaseShortLinkRequest.Problem) -> Result<Creation, Problem> {
            .failure(Problem(status: 400, title: "Invalid request body", detail: "\(problem.path) \(problem.reason)", path: problem.path))
        }
        if native {
            switch NativeLinkRequest.decode(body) {
            case .failure(let problem): return invalid(problem)
            case .success(let request): creation = Creation(domain: request.domain, parameters: request.parameters, suffix: request.suffix)
            }
            domainPath = "$.domain"
            parameterPath = { "$.parameters.\($0)" }
        } else {
            switch FirebaseShortLinkRequest.decode(body) {
            case .failure(let problem): return invalid(problem)
            case .success(let request):
                creation = Creation(
                    domain: request.domain,
                    parameters: request.parameters,
                    suffix: request.suffix == .short ? .short : .unguessable
                )
                domainPath = request.fromLongLink ? "$.longDynamicLink" : "$.dynamicLinkInfo.domainUriPrefix"
                parameterPath = { request.fromLongLink ? "$.longDynamicLink" : FirebaseShortLinkRequest.path(of: $0) }
            }
        }
        guard let site = config.site(forHost: creation.domain), let links = site.site.links else {
            return .failure(
                Problem(
                    status: 400,
                    title: "Not a link domain",
                    detail: "\(creation.domain) is not a link domain of this server (no site with \"links\" serves it)",
                    path: domainPath
                )
            )
        }
        let ownHosts = Set(site.site.hosts.map(\.value.description)).union([creation.domain])
        if case .failure(let refusal) = FirebaseLongLink.rule(creation.parameters, links: links, ownHosts: ownHosts) {
            return .failure(
                Problem(
                    status: 400,
                    title: "Link refused",
                    detail: "\(refusal.parameter) \(refusal.reason)",
                    path: parameterPath(refusal.parameter)
                )
            )
        }
        return .success(creation)
    }

    /// An update's body applied to `existing`: `{"parameters": {NAME: "value" or null}}`, a JSON merge patch
    /// (RFC 7396) of the link's parameters — a value sets one, null takes it away — checked as a creation is.
    public static func updatedParameters(body: [UInt8], existing: StoredLink, config: LoadedConfig) -> Result<[String: String], Problem> {
        func invalid(_ path: String, _ reason: String) -> Result<[String: String], Problem> {
            .failure(Problem(status: 400, title: "Invalid request body", detail: "\(path) \(reason)", path: path))
        }
        let members: [JSONMember]
        switch FirebaseShortLinkRequest.object(body, expected: "\"parameters\"") {
        case .failure(let problem): return invalid(problem.path, problem.reason)
        case .success(let object): members = object.members
        }
        for member in members where member.key != "parameters" {
            return invalid("$.\(member.key)", "is not a field of an update (parameters)")
        }
        guard let changes = members.first(where: { $0.key == "parameters" })?.value.objectValue else {
            return invalid("$.parameters", "is required: an object of the parameters to set, or null to take one away")
        }
        var parameters = existing.parameters
        for change in changes {
            switch change.value.value {
            case .string(let value): parameters[change.key] = value
            case .null: parameters[change.key] = nil
            default: return invalid("$.parameters.\(change.key)", "must be a string, or null to take it away")
            }
        }
        guard parameters["link"] != nil else { return invalid("$.parameters.link", "cannot be taken away: it is the deep link") }
        var updated = existing
        updated.parameters = parameters
        if let problem = ShortLinkImport.problem(updated, config: config) {
            return .failure(Problem(status: 400, title: "Link refused", detail: problem, path: "$.parameters"))
        }
        return .success(parameters)
    }

    /// A link domain's kill switch: `{"domain", "disabled", "since"}` (`since` only while disabled).
    public static func domainJSON(_ domain: String, disabledSince: Int64?) -> String {
        var members: [(String, JSONOutput)] = [("domain", .string(domain)), ("disabled", .bool(disabledSince != nil))]
        if let disabledSince { members.append(("since", .string(CivilTime(unixSeconds: Int(disabledSince)).isoSecond + "Z"))) }
        return JSONWriter.string(.object(members))
    }

    /// A claimed code's answer to the app: the deep link it opens, the short link and its parameters.
    public static func claimJSON(_ link: StoredLink) -> String {
        JSONWriter.string(
            .object([
                ("link", .string(link.parameters["link"] ?? link.shortLink)), ("shortLink", .string(link.shortLink)),
                ("parameters", .object(link.parameters.sorted { $0.key < $1.key }.map { ($0.key, .string($0.value)) })),
            ])
        )
    }

    /// FDL's answer to `shortLinks`: the link, its preview (the flow page, `?d=1`) and no warnings.
    public static func createdJSON(_ link: StoredLink) -> String {
        JSONWriter.string(
            .object([("shortLink", .string(link.shortLink)), ("previewLink", .string(link.shortLink + "?d=1")), ("warning", .array([]))])
        )
    }

    /// One row of a link's clicks: a day (YYYY-MM-DD), the visitor class, the outcome, HEAD or not.
    public struct ClickRow: Sendable, Equatable {
        public var day: String
        public var visitor: String
        public var outcome: String
        public var head: Bool
        public var count: Int

        public init(day: String, visitor: String, outcome: String, head: Bool, count: Int) {
            self.day = day
            self.visitor = visitor
            self.outcome = outcome
            self.head = head
            self.count = count
        }
    }

    /// What the app reports or claims, by the outcome its row is counted under, and FDL's event for it.
    public static let appEvents = [("install", "APP_INSTALL"), ("first-open", "APP_FIRST_OPEN"), ("re-open", "APP_RE_OPEN")]

    /// FDL's `linkStats` answer: `{"linkEventStats": [{"platform", "count", "event"}]}`, counts as strings as
    /// FDL wrote them. A CLICK is every GET by a person (crawlers and HEAD requests are counted apart, not
    /// here); a REDIRECT is a click sent on to a store, a fallback or the web; APP_INSTALL is a claim code
    /// redeemed (a deferred deep link that reached the installed app), APP_FIRST_OPEN and APP_RE_OPEN what
    /// the app reported with `POST /_/open`.
    public static func linkStatsJSON(_ rows: [ClickRow]) -> String {
        var counts: [String: [String: Int]] = [:]
        for row in rows where !row.head && row.visitor != "crawler" {
            let platform: String
            switch row.visitor {
            case "iphone", "ipad", "ios": platform = "IOS"
            case "android": platform = "ANDROID"
            case "desktop": platform = "DESKTOP"
            default: platform = "OTHER"
            }
            if let event = appEvents.first(where: { $0.0 == row.outcome })?.1 {
                counts[platform, default: [:]][event, default: 0] += row.count
                continue
            }
            counts[platform, default: [:]]["CLICK", default: 0] += row.count
            if ["store", "fallback", "web"].contains(row.outcome) { counts[platform, default: [:]]["REDIRECT", default: 0] += row.count }
        }
        var stats: [JSONOutput] = []
        for platform in ["ANDROID", "IOS", "DESKTOP", "OTHER"] {
            for event in ["CLICK", "REDIRECT"] + appEvents.map(\.1) {
                guard let count = counts[platform]?[event] else { continue }
                stats.append(.object([("platform", .string(platform)), ("count", .string(String(count))), ("event", .string(event))]))
            }
        }
        return JSONWriter.string(.object([("linkEventStats", .array(stats))]))
    }

    /// A stored link as the native API and `links --json` write it.
    public static func linkJSON(_ link: StoredLink) -> JSONOutput {
        .object([
            ("shortLink", .string(link.shortLink)), ("domain", .string(link.domain)), ("suffix", .string(link.suffix)),
            ("state", .string(link.state.rawValue)),
            ("parameters", .object(link.parameters.sorted { $0.key < $1.key }.map { ($0.key, .string($0.value)) })),
            ("created", .int(Int(link.created))), ("updated", .int(Int(link.updated))),
        ])
    }
}

extension FirebaseShortLinkRequest {
    /// Where a long-link parameter is written in a `dynamicLinkInfo` body (`afl` →
    /// `$.dynamicLinkInfo.androidInfo.androidFallbackLink`); `$` for one FDL's body has no field for.
    public static func path(of parameter: String) -> String {
        for (section, names) in fields {
            guard let field = names.first(where: { $0.value == parameter })?.key else { continue }
            return section.isEmpty ? "$.dynamicLinkInfo.\(field)" : "$.dynamicLinkInfo.\(section).\(field)"
        }
        return "$"
    }
}
