public import Support

/// The config's `server` section: listeners, limits, timeouts and logging (docs/serving.md, docs/config-reference.md).
///
/// Pure values with the defaults a production deployment wants; the server target turns them into sockets.
public struct ServerSettings: Sendable, Equatable {
    public struct Listener: Sendable, Equatable {
        /// An IPv4 or IPv6 literal (`0.0.0.0`, `::`, `127.0.0.1`, `::1`).
        public var address: String
        public var port: Int
        /// Expect a PROXY protocol v1 or v2 header before each connection's first request.
        public var proxyProtocol: Bool
        /// HTTPS: the certificate is chosen by SNI from `certificates`.
        public var tls: Bool

        public init(address: String, port: Int, proxyProtocol: Bool = false, tls: Bool = false) {
            self.address = address
            self.port = port
            self.proxyProtocol = proxyProtocol
            self.tls = tls
        }

        /// `127.0.0.1:8080`, `[::1]:8080`.
        public var description: String { address.contains(":") ? "[\(address)]:\(port)" : "\(address):\(port)" }
    }

    public var listeners: [Listener] = [Listener(address: "0.0.0.0", port: 8080), Listener(address: "::", port: 8080)]
    /// False while `listeners` are the defaults: then a host without IPv6 just skips `[::]:8080`.
    public var listenersConfigured = false
    /// Certificates for TLS listeners: the hosts each covers (for SNI) and its PEM files, relative to the config.
    public var certificates: [CertificateEntry] = []
    /// Nil turns the admin listener off.
    public var admin: Listener? = Listener(address: "127.0.0.1", port: 9090)
    /// The admin listener may listen on a non-loopback address (it is then read-only unless
    /// `adminTokenFile` is set). Without this, such an address is a config error.
    public var adminExposed = false
    /// A file holding the bearer token that admin requests other than `/healthz` and `/readyz` must
    /// carry (relative to the config).
    public var adminTokenFile: String?
    /// The link API's own bearer token (a backend that creates links then holds no admin power), relative
    /// to the config; the admin token works as well.
    public var linkAPITokenFile: String?
    /// Links each token may create per second through the API; a burst of ten seconds' worth is allowed.
    public var linkAPICreationsPerSecond = 100
    /// Days of stored short links' click counts kept (today included); nil keeps them all.
    public var clickRetentionDays: Int?
    /// The short links' PostgreSQL database, as libpq's connection string or URI (replicas share it); nil
    /// keeps them in `links.sqlite` in `stateDirectory`.
    public var linkStorePostgres: String?
    /// The file holding the PostgreSQL password (relative to the config): never in the config itself.
    public var linkStorePasswordFile: String?
    /// Event-loop threads; nil means one per CPU core.
    public var threads: Int?
    public var maxConnections = 10_000
    public var maxRequestsPerConnection = 1_000
    public var maxRequestLineBytes = 8 * 1024
    public var maxHeaderBytes = 16 * 1024
    public var maxHeaderCount = 100
    /// Bodies on GET/HEAD are read and discarded up to this many bytes; more is 413.
    public var maxBodyBytes = 64 * 1024
    /// Total time to receive a request's header, from accept or the end of the previous response.
    public var headerTimeout = 10.0
    /// How long an idle keep-alive connection is kept; must exceed the load balancer's idle timeout.
    public var keepAliveTimeout = 75.0
    /// A response whose write makes no progress for this long is abandoned.
    public var writeTimeout = 30.0
    /// On SIGTERM, in-flight responses get this long to finish.
    public var drainTimeout = 10.0
    public var cacheControl = "public, max-age=3600"
    /// An extra path on the main listeners answering 200 for load-balancer health checks.
    public var healthPath: String?
    /// Files served on the main listeners besides the documents, set by the command line (never read
    /// from a config): `dev` publishes its CA profile here so a phone can install it over the network.
    public var publishedFiles: [PublishedFile] = []

    public struct PublishedFile: Sendable, Equatable {
        public var path: String
        public var contentType: String
        public var body: [UInt8]

        public init(path: String, contentType: String, body: [UInt8]) {
            self.path = path
            self.contentType = contentType
            self.body = body
        }
    }
    public var accessLog = true
    /// How lifecycle and error lines on stderr are written: plain text, or one JSON object per line
    /// (`level`, `msg`, and `file`/`line`/`column`/`rule` for config findings) for log shippers.
    public var logFormat = LogFormat.text

    public enum LogFormat: String, Sendable {
        case text
        case json
    }
    /// Reload when the config or a file it references changes (inotify on their directories).
    public var watchFiles = true
    /// Where inotify is unavailable (or `"watch": "poll"`, for NFS and other mounts without inotify
    /// events): how often to check the files instead.
    public var pollInterval = 2.0
    public var forcePolling = false
    /// Use `X-Forwarded-For` as the client address in the access log (only behind a trusted proxy).
    public var trustForwardedHeaders = false
    /// Where fetch records are kept across restarts (relative to the config's directory); nil keeps them
    /// in memory only.
    public var stateDirectory: String?
    /// How many versions and how many fetches each host's record keeps.
    public var fetchHistory = 20
    /// How many hosts the fetch records keep at most (those fetched longest ago are dropped first).
    public var fetchHosts = 100_000
    /// How many of them one wildcard site's subdomains may be: a flood of made-up subdomains under one
    /// wildcard never pushes the other sites' records out.
    public var fetchHostsPerWildcard = 10_000
    /// The networks Apple's CDN fetches from: an `AASA-Bot` fetch from elsewhere is recorded as a claim.
    public var appleNetworks: [IPNetwork] = ["17.0.0.0/8"].compactMap(IPNetwork.init)
    /// Google's verifier's networks, besides forward-confirmed reverse DNS in Google's domains.
    public var googleNetworks: [IPNetwork] = []
    /// Certificates obtained and renewed from an ACME CA (nil: only the files of `certificates`).
    public var acme: ACMESettings?

    public init() {}

    public struct CertificateEntry: Sendable, Equatable {
        public var hosts: [String]
        public var certificate: String
        public var key: String
        public var origin: Provenance

        public init(hosts: [String], certificate: String, key: String, origin: Provenance = .none) {
            self.hosts = hosts
            self.certificate = certificate
            self.key = key
            self.origin = origin
        }

        public static func == (lhs: CertificateEntry, rhs: CertificateEntry) -> Bool {
            lhs.hosts == rhs.hosts && lhs.certificate == rhs.certificate && lhs.key == rhs.key
        }
    }
}

extension ServerSettings {
    static let certificateKeys = ["hosts", "certificate", "key", "comment"]
    static let keys = [
        "certificates", "listen", "admin", "adminExposed", "adminTokenFile", "threads", "maxConnections", "maxRequestsPerConnection",
        "limits", "timeouts", "cacheControl",
        "healthPath", "accessLog", "logFormat", "trustForwardedHeaders", "reload", "stateDirectory", "fetchHistory", "fetchHosts",
        "fetchHostsPerWildcard", "fetcherNetworks",
        "acme", "linkAPI", "linkStore", "clickRetentionDays", "comment",
    ]
    static let linkStoreKeys = ["postgres", "passwordFile", "comment"]
    static let linkAPIKeys = ["tokenFile", "creationsPerSecond", "comment"]
    static let fetcherNetworkKeys = ["apple", "google", "comment"]
    static let reloadKeys = ["watch", "pollSeconds"]
    static let listenerKeys = ["address", "port", "proxyProtocol", "tls", "comment"]
    static let limitKeys = ["requestLineBytes", "headerBytes", "headerCount", "bodyBytes"]
    static let timeoutKeys = ["header", "keepAlive", "write", "drain"]

    /// Parses `ADDR:PORT` / `[V6]:PORT` as given on the command line or in the config.
    public static func parseListenAddress(_ text: String) -> Result<Listener, HostError> {
        var address: Substring
        var portText: Substring
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]"), text[close...].hasPrefix("]:") else {
                return .failure(HostError("\"\(text)\" is not [IPv6]:PORT, e.g. [::1]:8080"))
            }
            address = text[text.index(after: text.startIndex)..<close]
            portText = text[text.index(close, offsetBy: 2)...]
        } else {
            guard let colon = text.lastIndex(of: ":") else {
                return .failure(HostError("\"\(text)\" has no port; write ADDRESS:PORT, e.g. 127.0.0.1:8080 or [::1]:8080"))
            }
            address = text[..<colon]
            portText = text[text.index(after: colon)...]
            if address.contains(":") {
                return .failure(HostError("\"\(text)\": put IPv6 addresses in brackets, e.g. [::1]:8080"))
            }
        }
        if address.isEmpty || address == "*" { address = "0.0.0.0" }
        guard let port = Int(portText), (0...65535).contains(port), portText.allSatisfy(\.isASCII) else {
            return .failure(HostError("\"\(text)\": the port must be a number from 0 to 65535"))
        }
        guard isIPLiteral(String(address)) else {
            return .failure(
                HostError("\"\(text)\": listen on an IP address (0.0.0.0, ::, 127.0.0.1, ::1), not a host name")
            )
        }
        return .success(Listener(address: String(address), port: port))
    }

    /// 127.0.0.0/8 and ::1: what only this machine can reach.
    public static func isLoopback(_ address: String) -> Bool {
        address == "::1" || (isIPLiteral(address) && address.hasPrefix("127."))
    }

    public static func isIPLiteral(_ text: String) -> Bool {
        if text.contains(":") {
            return !text.isEmpty && text.allSatisfy { $0.isHexDigit || $0 == ":" || $0 == "." }
                && text.filter({ $0 == ":" }).count >= 2
        }
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4
            && parts.allSatisfy { part in
                !part.isEmpty && part.count <= 3 && part.allSatisfy(\.isASCII) && Int(part).map { $0 <= 255 } == true
            }
    }
}

extension ConfigDecoder {
    static func decodeServer(_ node: JSONNode, _ path: JSONPath, _ reader: inout NodeReader) -> ServerSettings {
        var settings = ServerSettings()
        guard let members = reader.object(node, path) else { return settings }
        reader.checkKeys(members, path, known: ServerSettings.keys, context: "server")

        func positiveInt(_ node: JSONNode, _ path: JSONPath, minimum: Int = 1) -> Int? {
            if case .number(let text) = node.value, let value = Int(text), value >= minimum { return value }
            reader.typeMismatch(node, path, expected: "a whole number ≥ \(minimum)")
            return nil
        }
        func seconds(_ node: JSONNode, _ path: JSONPath) -> Double? {
            if case .number(let text) = node.value, let value = Double(text), value > 0, value <= 86_400 { return value }
            reader.typeMismatch(node, path, expected: "a number of seconds between 0 and 86400 (e.g. 10 or 0.5)")
            return nil
        }
        /// A string that must not be empty (a file or directory name): nil and `rule` reported when it is.
        func nonEmpty(_ node: JSONNode, _ path: JSONPath, rule: String, _ message: String) -> String? {
            guard let text = reader.string(node, path) else { return nil }
            guard !text.value.isEmpty else {
                reader.report(.error, rule, message, node.location, path)
                return nil
            }
            return text.value
        }
        /// The members of a nested settings object (`limits`, `timeouts`, `reload`), unknown keys reported.
        func fields(_ node: JSONNode, _ path: JSONPath, known: [String], context: String) -> [(member: JSONMember, path: JSONPath)] {
            guard let fields = reader.object(node, path) else { return [] }
            reader.checkKeys(fields, path, known: known, context: context)
            return fields.map { ($0, path.key($0.key)) }
        }
        func listener(_ node: JSONNode, _ path: JSONPath) -> ServerSettings.Listener? {
            if let text = node.stringValue {
                switch ServerSettings.parseListenAddress(text) {
                case .success(let parsed): return parsed
                case .failure(let error):
                    reader.report(.error, "server.listen", error.message, node.location, path)
                    return nil
                }
            }
            guard let fields = reader.object(node, path, what: "\"ADDRESS:PORT\" or {\"address\", \"port\", \"proxyProtocol\"}")
            else { return nil }
            reader.checkKeys(fields, path, known: ServerSettings.listenerKeys, context: "listener")
            guard let addressNode = node["address"], let address = reader.string(addressNode, path.key("address")),
                let portNode = node["port"], let port = positiveInt(portNode, path.key("port"), minimum: 0)
            else {
                reader.report(.error, "server.listen", "a listener needs \"address\" and \"port\"", node.location, path)
                return nil
            }
            guard ServerSettings.isIPLiteral(address.value), port <= 65535 else {
                reader.report(
                    .error,
                    "server.listen",
                    "listener \(address.value):\(port) must use an IP address (0.0.0.0, ::, 127.0.0.1, ::1) and a port up to 65535",
                    node.location,
                    path
                )
                return nil
            }
            var result = ServerSettings.Listener(address: address.value, port: port)
            if let proxy = node["proxyProtocol"], let flag = reader.bool(proxy, path.key("proxyProtocol")) {
                result.proxyProtocol = flag
            }
            if let tls = node["tls"], let flag = reader.bool(tls, path.key("tls")) {
                result.tls = flag
            }
            return result
        }

        for member in members {
            let memberPath = path.key(member.key)
            let value = member.value
            switch member.key {
            case "listen":
                guard let items = value.arrayValue else {
                    reader.typeMismatch(value, memberPath, expected: "an array of listeners", hint: "write [\"0.0.0.0:8080\"]")
                    continue
                }
                settings.listeners = items.enumerated().compactMap { listener($1, memberPath.index($0)) }
                settings.listenersConfigured = true
                if items.isEmpty {
                    reader.report(
                        .error,
                        "server.listen",
                        "\"listen\" is empty; the server would accept nothing",
                        value.location,
                        memberPath
                    )
                }
            case "admin":
                if value.boolValue == false || value.stringValue == "off" {
                    settings.admin = nil
                } else if let parsed = listener(value, memberPath) {
                    settings.admin = parsed
                }
            case "threads": settings.threads = positiveInt(value, memberPath).map { min($0, 256) }
            case "maxConnections": settings.maxConnections = positiveInt(value, memberPath) ?? settings.maxConnections
            case "maxRequestsPerConnection":
                settings.maxRequestsPerConnection = positiveInt(value, memberPath) ?? settings.maxRequestsPerConnection
            case "limits":
                for (field, fieldPath) in fields(value, memberPath, known: ServerSettings.limitKeys, context: "limits") {
                    switch field.key {
                    case "requestLineBytes":
                        settings.maxRequestLineBytes = positiveInt(field.value, fieldPath, minimum: 64) ?? settings.maxRequestLineBytes
                    case "headerBytes":
                        settings.maxHeaderBytes = positiveInt(field.value, fieldPath, minimum: 64) ?? settings.maxHeaderBytes
                    case "headerCount": settings.maxHeaderCount = positiveInt(field.value, fieldPath) ?? settings.maxHeaderCount
                    case "bodyBytes": settings.maxBodyBytes = positiveInt(field.value, fieldPath, minimum: 0) ?? settings.maxBodyBytes
                    default: break
                    }
                }
            case "timeouts":
                for (field, fieldPath) in fields(value, memberPath, known: ServerSettings.timeoutKeys, context: "timeouts") {
                    switch field.key {
                    case "header": settings.headerTimeout = seconds(field.value, fieldPath) ?? settings.headerTimeout
                    case "keepAlive": settings.keepAliveTimeout = seconds(field.value, fieldPath) ?? settings.keepAliveTimeout
                    case "write": settings.writeTimeout = seconds(field.value, fieldPath) ?? settings.writeTimeout
                    case "drain": settings.drainTimeout = seconds(field.value, fieldPath) ?? settings.drainTimeout
                    default: break
                    }
                }
            case "cacheControl":
                if let text = reader.string(value, memberPath) {
                    if text.value.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value > 0x7E }) {
                        reader.report(
                            .error,
                            "server.cache-control",
                            "\"cacheControl\" must be printable ASCII on one line",
                            value.location,
                            memberPath
                        )
                    } else {
                        settings.cacheControl = text.value
                    }
                }
            case "healthPath":
                if let text = reader.string(value, memberPath) {
                    if !text.value.hasPrefix("/") || text.value.contains("?") || text.value.contains(" ") {
                        reader.report(
                            .error,
                            "server.health-path",
                            "\"healthPath\" must be a path such as \"/healthz\"",
                            value.location,
                            memberPath
                        )
                    } else if text.value.hasSuffix("apple-app-site-association") {
                        reader.report(.error, "server.health-path", "\"healthPath\" cannot be an AASA path", value.location, memberPath)
                    } else {
                        settings.healthPath = text.value
                    }
                }
            case "certificates":
                guard let items = value.arrayValue else {
                    reader.typeMismatch(value, memberPath, expected: "an array of {\"hosts\", \"certificate\", \"key\"} objects")
                    continue
                }
                for (index, item) in items.enumerated() {
                    let itemPath = memberPath.index(index)
                    guard let fields = reader.object(item, itemPath) else { continue }
                    reader.checkKeys(fields, itemPath, known: ServerSettings.certificateKeys, context: "certificate")
                    guard let hostsNode = item["hosts"], let certificateNode = item["certificate"], let keyNode = item["key"] else {
                        reader.report(
                            .error,
                            "server.certificate",
                            "a certificate entry needs \"hosts\", \"certificate\" (PEM chain, leaf first) and \"key\" (PEM)",
                            item.location,
                            itemPath
                        )
                        continue
                    }
                    var hosts: [String] = []
                    for host in reader.stringArray(hostsNode, itemPath.key("hosts")) ?? [] {
                        switch HostPattern.parse(host.value) {
                        case .success(let pattern): hosts.append(pattern.description)
                        case .failure(let error):
                            reader.report(.error, "host.invalid", error.message, host.origin.location, host.origin.path)
                        }
                    }
                    guard let certificate = reader.string(certificateNode, itemPath.key("certificate")),
                        let key = reader.string(keyNode, itemPath.key("key"))
                    else { continue }
                    settings.certificates.append(
                        ServerSettings.CertificateEntry(
                            hosts: hosts,
                            certificate: certificate.value,
                            key: key.value,
                            origin: Provenance(item.location, itemPath)
                        )
                    )
                }
            case "clickRetentionDays": settings.clickRetentionDays = positiveInt(value, memberPath) ?? settings.clickRetentionDays
            case "linkAPI":
                for (field, fieldPath) in fields(value, memberPath, known: ServerSettings.linkAPIKeys, context: "linkAPI") {
                    switch field.key {
                    case "tokenFile":
                        let message = "\"tokenFile\" is empty; name the file holding the link API's token"
                        settings.linkAPITokenFile = nonEmpty(field.value, fieldPath, rule: "server.admin-token", message)
                    case "creationsPerSecond":
                        settings.linkAPICreationsPerSecond = positiveInt(field.value, fieldPath) ?? settings.linkAPICreationsPerSecond
                    default: break
                    }
                }
            case "linkStore":
                for (field, fieldPath) in fields(value, memberPath, known: ServerSettings.linkStoreKeys, context: "linkStore") {
                    switch field.key {
                    case "postgres":
                        let message =
                            "\"postgres\" is empty; give libpq's connection string, e.g. \"host=db.internal dbname=links user=aasa\""
                        guard let text = nonEmpty(field.value, fieldPath, rule: "server.link-store", message) else { continue }
                        if PostgresConnectionString.hasPassword(text) {
                            reader.report(
                                .error,
                                "server.link-store",
                                "the connection string holds a password; put it in the file \"passwordFile\" names, so it is never in the config or the logs",
                                field.value.location,
                                fieldPath
                            )
                        } else {
                            settings.linkStorePostgres = text
                        }
                    case "passwordFile":
                        let message = "\"passwordFile\" is empty; name the file holding the PostgreSQL password"
                        settings.linkStorePasswordFile = nonEmpty(field.value, fieldPath, rule: "server.link-store", message)
                    default: break
                    }
                }
                if settings.linkStorePasswordFile != nil, value["postgres"] == nil {
                    reader.report(
                        .error,
                        "server.link-store",
                        "\"passwordFile\" without \"postgres\": name the database the password is for",
                        value.location,
                        memberPath
                    )
                }
            case "reload":
                for (field, fieldPath) in fields(value, memberPath, known: ServerSettings.reloadKeys, context: "reload") {
                    switch field.key {
                    case "watch":
                        if field.value.stringValue == "poll" {
                            settings.watchFiles = true
                            settings.forcePolling = true
                        } else if field.value.stringValue == "inotify" {
                            settings.watchFiles = true
                        } else {
                            settings.watchFiles = reader.bool(field.value, fieldPath) ?? settings.watchFiles
                        }
                    case "pollSeconds": settings.pollInterval = seconds(field.value, fieldPath) ?? settings.pollInterval
                    default: break
                    }
                }
            case "adminExposed": settings.adminExposed = reader.bool(value, memberPath) ?? settings.adminExposed
            case "adminTokenFile":
                let message = "\"adminTokenFile\" is empty; name the file holding the token"
                settings.adminTokenFile = nonEmpty(value, memberPath, rule: "server.admin-token", message) ?? settings.adminTokenFile
            case "accessLog": settings.accessLog = reader.bool(value, memberPath) ?? settings.accessLog
            case "logFormat":
                if let text = reader.string(value, memberPath) {
                    if let format = ServerSettings.LogFormat(rawValue: text.value) {
                        settings.logFormat = format
                    } else {
                        reader.report(
                            .error,
                            "server.log-format",
                            "\"logFormat\" is \"text\" or \"json\", found \"\(text.value)\"",
                            value.location,
                            memberPath
                        )
                    }
                }
            case "trustForwardedHeaders":
                settings.trustForwardedHeaders = reader.bool(value, memberPath) ?? settings.trustForwardedHeaders
            case "stateDirectory":
                let message = "\"stateDirectory\" is empty; name a directory for the fetch records, or leave the key out"
                settings.stateDirectory = nonEmpty(value, memberPath, rule: "server.state-directory", message) ?? settings.stateDirectory
            case "fetchHosts":
                settings.fetchHosts = positiveInt(value, memberPath).map { min($0, 10_000_000) } ?? settings.fetchHosts
            case "fetchHostsPerWildcard":
                settings.fetchHostsPerWildcard =
                    positiveInt(value, memberPath).map { min($0, 10_000_000) } ?? settings.fetchHostsPerWildcard
            case "fetchHistory":
                settings.fetchHistory = positiveInt(value, memberPath).map { min($0, 10_000) } ?? settings.fetchHistory
            case "fetcherNetworks":
                for (field, fieldPath) in fields(value, memberPath, known: ServerSettings.fetcherNetworkKeys, context: "fetcherNetworks") {
                    guard field.key != "comment" else { continue }
                    guard let items = field.value.arrayValue else {
                        reader.report(
                            .error,
                            "server.fetcher-networks",
                            "\"\(field.key)\" is a list of address blocks such as \"17.0.0.0/8\"",
                            field.value.location,
                            fieldPath
                        )
                        continue
                    }
                    var networks: [IPNetwork] = []
                    for (index, item) in items.enumerated() {
                        guard let text = item.stringValue, let network = IPNetwork(text) else {
                            reader.report(
                                .error,
                                "server.fetcher-networks",
                                "\(item.stringValue.map { "\"\($0)\"" } ?? "this") is not an address block: write it as "
                                    + "ADDRESS/PREFIX with the host bits zero (\"17.0.0.0/8\", \"2620:149::/32\")",
                                item.location,
                                fieldPath.index(index)
                            )
                            continue
                        }
                        networks.append(network)
                    }
                    if field.key == "apple" { settings.appleNetworks = networks } else { settings.googleNetworks = networks }
                }
            case "acme":
                let storageInDatabase = node["linkStore"]?["postgres"] != nil
                settings.acme = decodeACME(value, memberPath, &reader, storageInDatabase: storageInDatabase)
            default: break
            }
        }
        if let admin = settings.admin, !ServerSettings.isLoopback(admin.address) {
            let location = node["admin"]?.location ?? node.location
            if !settings.adminExposed {
                reader.report(
                    .error,
                    "server.admin-exposed",
                    "the admin listener \(admin.description) is reachable from other machines, and it answers reloads and lists "
                        + "host names in /metrics; keep it on 127.0.0.1, or set \"adminExposed\": true (then it is read-only "
                        + "unless \"adminTokenFile\" names a bearer token)",
                    location,
                    path.key("admin")
                )
            } else if settings.adminTokenFile == nil {
                reader.report(
                    .warning,
                    "server.admin-exposed",
                    "the admin listener \(admin.description) is exposed read-only: /healthz, /readyz and /metrics (host names, "
                        + "counts) answer anyone who can reach it, and POST /reload is refused; set \"adminTokenFile\" to allow "
                        + "reloads with a bearer token",
                    location,
                    path.key("admin")
                )
            } else {
                reader.report(
                    .warning,
                    "server.admin-exposed",
                    "the admin listener \(admin.description) is exposed: everything but /healthz and /readyz needs the bearer token "
                        + "from adminTokenFile; keep it off the public internet all the same",
                    location,
                    path.key("admin")
                )
            }
        }
        if settings.listeners.contains(where: \.tls) && settings.certificates.isEmpty && node["acme"] == nil {
            reader.report(
                .error,
                "server.tls-certificates",
                "a listener has \"tls\": true but \"certificates\" is empty; add [{\"hosts\": [...], \"certificate\": \"chain.pem\", \"key\": \"key.pem\"}], "
                    + "or let the server obtain certificates itself with \"acme\"",
                node.location,
                path
            )
        }
        return settings
    }
}
