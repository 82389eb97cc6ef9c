import AASA
import HTTP1
import HTTPClient
import Links
import Support
import TLS

/// `links … --server URL`: the same actions through a running server's link API (its admin listener),
/// for a machine that can reach the server but not its database. The server checks what its own
/// command-line twin checks (the allowlist, the alias rules, the token's rate) and answers in problem
/// documents, which are said here in words; the output is the database-side command's, byte for byte.
enum LinksOverAPI {
    /// The actions the API carries (import writes a whole file to the store and stays with `--config`).
    static let actions = [
        "create", "list", "show", "update", "disable", "enable", "delete", "stats", "qr", "export", "disable-domain", "enable-domain",
    ]

    /// A refusal or failure already said on stderr, with the exit status it means.
    struct Failed: Error {
        var status: Int32
    }

    /// One server's link API: every call a fresh connection, 10 s at most.
    struct Server {
        let base: ClientURL
        let token: String?
        let http: HTTPClient
        let console: any Console

        /// The JSON of a 2xx answer to `method path`; a refusal is said (its title, detail and the JSON path
        /// it names) and thrown: 1 for a refusal of the request, 2 when the server cannot be used at all.
        func call(_ method: String, _ path: String, body: JSONOutput? = nil) throws(Failed) -> JSONNode {
            try send(method, path, body: body).node
        }

        /// ``call(_:_:body:)`` with the answer's bytes as well, for printing them as they came.
        func send(_ method: String, _ path: String, body: JSONOutput? = nil) throws(Failed) -> (node: JSONNode, bytes: [UInt8]) {
            var url = base
            // A server behind a path prefix (https://admin.example.com/links) keeps it.
            let prefix = base.target.hasSuffix("/") ? String(base.target.dropLast()) : base.target
            url.target = prefix + path
            var headers: [(String, String)] = [("Accept", "application/json")]
            if let token { headers.append(("Authorization", "Bearer \(token)")) }
            let bytes = body.map { Array(JSONWriter.string($0).utf8) } ?? []
            if body != nil { headers.append(("Content-Type", "application/json")) }
            let response: ParsedResponse
            switch http.send(method, url, headers: headers, body: bytes, timeoutMilliseconds: 10_000) {
            case .success(let answered): response = answered
            case .failure(let error):
                console.err("error: \(base.description): \(error)\n")
                throw Failed(status: ExitStatus.usage)
            }
            let parsed = JSONParser.parse(response.body).root
            guard (200..<300).contains(response.status) else {
                let title = parsed?["title"]?.stringValue ?? response.reason
                let detail = parsed?["detail"]?.stringValue.map { ": \($0)" } ?? ""
                let path = parsed?["path"]?.stringValue.map { " (at \($0))" } ?? ""
                console.err("error: \(method) \(url.description) answered \(response.status) \(title)\(detail)\(path)\n")
                // Refused for what was asked (no such link, a taken alias, a destination off the allowlist):
                // 1; the server would refuse anything (token, no link store, unavailable): 2.
                let unusable = [401, 403, 404, 405, 500, 503].contains(response.status) && parsed?["title"]?.stringValue != "No such link"
                throw Failed(status: unusable ? ExitStatus.usage : ExitStatus.failure)
            }
            guard let parsed else {
                console.err("error: \(method) \(url.description) answered \(response.status) without JSON\n")
                throw Failed(status: ExitStatus.usage)
            }
            return (parsed, response.body)
        }

        func link(_ domain: String, _ suffix: String) throws(Failed) -> StoredLink {
            try read(call("GET", "/v1/links/\(domain)/\(suffix)"), ShortLinkAPI.link)
        }

        /// `parse` of an answer; an answer that is not what the API writes is said and thrown.
        func read<T>(_ node: JSONNode, _ parse: (JSONNode) -> T?) throws(Failed) -> T {
            guard let value = parse(node) else {
                console.err("error: \(base.description) answered with JSON this version does not read\n")
                throw Failed(status: ExitStatus.usage)
            }
            return value
        }

        /// Every live link (one domain's), a page at a time.
        func everyLink(domain: String?) throws(Failed) -> (links: [StoredLink], disabledDomains: [String: Int64]) {
            var links: [StoredLink] = []
            var disabled: [String: Int64] = [:]
            var after: String?
            repeat {
                var query = "limit=\(ShortLinkAPI.pageLimit)"
                if let domain { query += "&domain=\(domain)" }
                if let last = after { query += "&after=\(last)" }
                let page = try read(call("GET", "/v1/links?\(query)"), ShortLinkAPI.page)
                links += page.links
                disabled = page.disabledDomains
                after = page.next
            } while after != nil
            return (links, disabled)
        }
    }

    static func run(_ action: String, _ arguments: ParsedArguments, serverURL: String, console: any Console) -> Int32 {
        let usage = LinksCommand.subcommand.help
        guard actions.contains(action) else {
            let why =
                action == "import"
                ? "import writes to the link store itself: run it with --config (the server's config), not --server"
                : "unknown action '\(action)'; with --server the actions are \(actions.joined(separator: ", "))"
            return CommandLineTool.usageError(why, console: console, usage: usage)
        }
        guard let base = ClientURL(serverURL), base.target.split(separator: "?").count <= 1 else {
            return CommandLineTool.usageError(
                "--server takes the admin listener's http:// or https:// URL, e.g. http://127.0.0.1:9090",
                console: console,
                usage: usage
            )
        }
        let token: String?
        switch HealthcheckCommand.token(arguments) {
        case .success(let read): token = read
        case .failure(let error): return CommandLineTool.usageError(error.message, console: console, usage: usage)
        }
        let http: HTTPClient
        do throws(TLSError) {
            http = try HTTPClient(userAgent: "aasa-server-links")
        } catch {
            console.err("error: \(error)\n")
            return ExitStatus.usage
        }
        let server = Server(base: base, token: token, http: http, console: console)
        do throws(Failed) {
            return try perform(action, arguments, server)
        } catch {
            return error.status
        }
    }

    private static func perform(_ action: String, _ arguments: ParsedArguments, _ server: Server) throws(Failed) -> Int32 {
        let console = server.console
        let json = arguments.has("--json")
        let usage = LinksCommand.subcommand.help
        func named() throws(Failed) -> (String, String) {
            guard let named = LinksCommand.namedLink(arguments, action, console: console) else { throw Failed(status: ExitStatus.usage) }
            return named
        }
        switch action {
        case "create":
            guard let domain = arguments.value("--domain")?.lowercased() else {
                return CommandLineTool.usageError(
                    "create needs --domain HOST (a host of a site with \"links\")",
                    console: console,
                    usage: usage
                )
            }
            var parameters: [String: String] = [:]
            guard LinksCommand.given(arguments, into: &parameters, console: console) else { return ExitStatus.usage }
            guard parameters["link"] != nil else {
                return CommandLineTool.usageError("create needs --link URL (the deep link)", console: console, usage: usage)
            }
            var members: [(String, JSONOutput)] = [
                ("domain", .string(domain)),
                ("parameters", .object(parameters.sorted { $0.key < $1.key }.map { ($0.key, .string($0.value)) })),
            ]
            if let alias = arguments.value("--alias") {
                if arguments.has("--short") {
                    return CommandLineTool.usageError("--alias and --short both name the suffix; give one", console: console, usage: usage)
                }
                members.append(("suffix", .string(alias)))
            } else if arguments.has("--short") {
                members.append(("short", .bool(true)))
            }
            let link = try server.read(server.call("POST", "/v1/links", body: .object(members)), ShortLinkAPI.link)
            console.out(json ? JSONWriter.string(ShortLinkAPI.linkJSON(link), pretty: true) + "\n" : link.shortLink + "\n")
        case "list", "export":
            let domain = arguments.positionals.dropFirst().first?.lowercased()
            let every = try server.everyLink(domain: domain)
            if action == "export" {
                for link in every.links { console.out(JSONWriter.string(ShortLinkAPI.linkJSON(link)) + "\n") }
            } else {
                LinksCommand.printList(every.links, disabledDomains: every.disabledDomains, domain: domain, json: json, console: console)
            }
        case "show":
            let (domain, suffix) = try named()
            let link = try server.link(domain, suffix)
            if json {
                LinksCommand.printChanged(link, json: true, console: console)
            } else {
                let history = try server.read(server.call("GET", "/v1/links/\(domain)/\(suffix)/history"), ShortLinkAPI.history)
                console.out(LinksCommand.text(link, history: history))
            }
        case "disable", "enable", "delete":
            let (domain, suffix) = try named()
            let path = "/v1/links/\(domain)/\(suffix)"
            let answer = action == "delete" ? try server.call("DELETE", path) : try server.call("POST", path + "/" + action)
            LinksCommand.printChanged(try server.read(answer, ShortLinkAPI.link), json: json, console: console)
        case "update":
            let (domain, suffix) = try named()
            var parameters: [String: String] = [:]
            guard LinksCommand.given(arguments, into: &parameters, console: console) else { return ExitStatus.usage }
            let removed = arguments.all("--remove")
            guard !parameters.isEmpty || !removed.isEmpty else {
                return CommandLineTool.usageError(
                    "update changes nothing: give the values to set (--link, --web, --parameter NAME=VALUE …) or --remove NAME",
                    console: console,
                    usage: usage
                )
            }
            // A JSON merge patch: a value sets, null takes away.
            let patch: [(String, JSONOutput)] =
                parameters.sorted { $0.key < $1.key }.map { ($0.key, .string($0.value)) } + removed.map { ($0, .null) }
            let body = JSONOutput.object([("parameters", .object(patch))])
            let link = try server.read(server.call("PATCH", "/v1/links/\(domain)/\(suffix)", body: body), ShortLinkAPI.link)
            console.out(json ? JSONWriter.string(ShortLinkAPI.linkJSON(link), pretty: true) + "\n" : "\(link.shortLink) updated\n")
        case "stats":
            let (domain, suffix) = try named()
            guard let days = LinksCommand.statsDays(arguments, console: console) else { return ExitStatus.usage }
            let link = try server.link(domain, suffix)
            let rows = try server.read(server.call("GET", "/v1/links/\(domain)/\(suffix)/clicks?days=\(days)"), ShortLinkAPI.clickRows)
            console.out(json ? ShortLinkAPI.clicksJSON(link, rows, pretty: true) + "\n" : LinksCommand.statsText(link, rows, days: days))
        case "qr":
            let (domain, suffix) = try named()
            return LinksCommand.qrCode(try server.link(domain, suffix), output: arguments.value("--output"), console: console)
        default:
            guard arguments.positionals.count == 2 else {
                return CommandLineTool.usageError("write: links \(action) HOST", console: console, usage: usage)
            }
            let domain = arguments.positionals[1].lowercased()
            let answer = try server.send("POST", "/v1/domains/\(domain)/\(action == "disable-domain" ? "disable" : "enable")")
            guard case .bool(let disabled)? = answer.node["disabled"]?.value else {
                console.err("error: \(server.base.description) answered with JSON this version does not read\n")
                return ExitStatus.usage
            }
            if json {
                console.out(String(decoding: answer.bytes[...].trimmingASCIIWhitespace(), as: UTF8.self) + "\n")
            } else {
                LinksCommand.printDomain(domain, disabledSince: disabled ? 0 : nil, json: false, console: console)
            }
        }
        return ExitStatus.success
    }
}
