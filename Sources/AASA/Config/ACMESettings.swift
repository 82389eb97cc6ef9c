/// `server.acme`: certificates the server obtains and renews itself from an RFC 8555 CA.
public struct ACMESettings: Sendable, Equatable {
    public static let letsEncrypt = "https://acme-v02.api.letsencrypt.org/directory"
    public static let letsEncryptStaging = "https://acme-staging-v02.api.letsencrypt.org/directory"

    /// The CA's directory URL (`"letsencrypt"` and `"letsencrypt-staging"` name Let's Encrypt's).
    public var directory = ACMESettings.letsEncrypt
    /// A PEM file whose certificates are trusted for the directory's HTTPS (a private CA, Pebble).
    public var directoryTrust: String?
    public var email: String?
    public var agreeToTerms = false
    /// Account key, certificates, locks and pending HTTP-01 answers; may be shared by replicas. Empty with
    /// `server.linkStore.postgres`: they are kept in that database.
    public var storage = ""
    public var externalAccount: ExternalAccount?
    public var keyType = KeyType.ecdsaP256
    /// Every exact host of the config without a certificate file gets one.
    public var configHosts = true
    public var onDemand: OnDemand?
    /// Challenge types in the order they are tried; nil: whichever the listeners allow.
    public var challenges: [Challenge]?
    /// The command DNS-01 runs (`present` / `cleanup`), needed for wildcard hosts.
    public var dnsHook: String?
    public var maxConcurrentOrders = 4
    /// First orders (not renewals) per hour, all names together: with the burst of as many, 240 in any
    /// 3 hours at most, inside Let's Encrypt's 300 new orders per account per 3 hours.
    public var ordersPerHour = 60
    /// First orders per registered domain (its last two labels) per week, in bursts of a quarter of it:
    /// inside Let's Encrypt's 50 certificates per registered domain per week.
    public var ordersPerDomainPerWeek = 40
    /// After a failed order for a config host, no new one before this many seconds (doubling to a day).
    public var retryAfterFailure = 60
    /// Seconds after which a storage lock nobody touched is a dead replica's and is taken over (holders
    /// touch theirs every 10 s). Raise it for a file server whose writes can stall longer.
    public var lockStaleAfter = 120

    public enum KeyType: String, Sendable, Equatable, CaseIterable {
        case ecdsaP256 = "ecdsa-p256"
        case rsa2048 = "rsa-2048"
    }

    public enum Challenge: String, Sendable, Equatable, CaseIterable {
        case http01 = "http-01"
        case tlsALPN01 = "tls-alpn-01"
        case dns01 = "dns-01"
    }

    /// External Account Binding (RFC 8555 §7.3.4): ZeroSSL, Google Trust Services, some private CAs.
    public struct ExternalAccount: Sendable, Equatable {
        public var keyID: String
        /// A file holding the base64url HMAC key the CA gave.
        public var hmacKeyFile: String
    }

    /// Issuance started by a TLS handshake for a host of the config that has no certificate yet.
    public struct OnDemand: Sendable, Equatable {
        /// Asked `GET <ask>?domain=<host>` first; only 200 allows an order (Caddy's convention).
        public var ask: String?
        /// After a failed order, no new one for the host before this many seconds (doubling to a day).
        public var retryAfterFailure = 600
    }

    public init() {}

    static let keys = [
        "directory", "directoryTrust", "email", "agreeToTerms", "storage", "externalAccount", "keyType", "hosts", "onDemand",
        "challenges", "dnsHook", "maxConcurrentOrders", "ordersPerHour", "ordersPerDomainPerWeek", "retryAfterFailure", "lockStaleAfter",
        "comment",
    ]
}

extension ConfigDecoder {
    /// `storageInDatabase`: the config names a PostgreSQL database (`server.linkStore`), which holds the
    /// storage when `storage` names no directory.
    static func decodeACME(_ node: JSONNode, _ path: JSONPath, _ reader: inout NodeReader, storageInDatabase: Bool = false) -> ACMESettings?
    {
        guard let members = reader.object(node, path) else { return nil }
        reader.checkKeys(members, path, known: ACMESettings.keys, context: "acme")
        var settings = ACMESettings()
        var valid = true
        func fail(_ rule: String, _ message: String, _ at: JSONNode, _ where: JSONPath) {
            reader.report(.error, rule, message, at.location, `where`)
            valid = false
        }
        func nonEmptyString(_ value: JSONNode, _ memberPath: JSONPath) -> String? {
            guard let text = reader.string(value, memberPath) else {
                valid = false
                return nil
            }
            guard !text.value.isEmpty else {
                fail("acme.empty", "\"\(memberPath.description)\" is empty", value, memberPath)
                return nil
            }
            return text.value
        }
        func wholeNumber(_ value: JSONNode, _ memberPath: JSONPath, in range: ClosedRange<Int>, expected: String) -> Int? {
            if case .number(let text) = value.value, let number = Int(text), range.contains(number) { return number }
            reader.typeMismatch(value, memberPath, expected: expected)
            valid = false
            return nil
        }
        for member in members {
            let memberPath = path.key(member.key)
            let value = member.value
            switch member.key {
            case "directory":
                guard let text = nonEmptyString(value, memberPath) else { continue }
                switch text {
                case "letsencrypt": settings.directory = ACMESettings.letsEncrypt
                case "letsencrypt-staging": settings.directory = ACMESettings.letsEncryptStaging
                default:
                    if text.hasPrefix("https://") && text.count > 8 {
                        settings.directory = text
                    } else {
                        fail(
                            "acme.directory",
                            "\"directory\" is \"letsencrypt\", \"letsencrypt-staging\" or the https:// URL of an RFC 8555 CA's "
                                + "directory, found \"\(text)\"",
                            value,
                            memberPath
                        )
                    }
                }
            case "directoryTrust": settings.directoryTrust = nonEmptyString(value, memberPath)
            case "email":
                guard let text = nonEmptyString(value, memberPath) else { continue }
                let parts = text.split(separator: "@", omittingEmptySubsequences: false)
                if parts.count == 2, !parts[0].isEmpty, parts[1].contains("."), !text.contains(where: { $0 == " " || $0 == "," }) {
                    settings.email = text
                } else {
                    fail("acme.email", "\"email\" must be one address such as \"ops@example.com\", found \"\(text)\"", value, memberPath)
                }
            case "agreeToTerms": settings.agreeToTerms = reader.bool(value, memberPath) ?? false
            case "storage": settings.storage = nonEmptyString(value, memberPath) ?? ""
            case "externalAccount":
                guard let fields = reader.object(value, memberPath) else { continue }
                reader.checkKeys(fields, memberPath, known: ["keyId", "hmacKeyFile", "comment"], context: "externalAccount")
                guard let keyNode = value["keyId"], let fileNode = value["hmacKeyFile"] else {
                    fail(
                        "acme.external-account",
                        "\"externalAccount\" needs \"keyId\" and \"hmacKeyFile\" (a file holding the HMAC key the CA gave)",
                        value,
                        memberPath
                    )
                    continue
                }
                if let keyID = nonEmptyString(keyNode, memberPath.key("keyId")),
                    let file = nonEmptyString(fileNode, memberPath.key("hmacKeyFile"))
                {
                    settings.externalAccount = ACMESettings.ExternalAccount(keyID: keyID, hmacKeyFile: file)
                }
            case "keyType":
                guard let text = nonEmptyString(value, memberPath) else { continue }
                if let type = ACMESettings.KeyType(rawValue: text) {
                    settings.keyType = type
                } else {
                    fail("acme.key-type", "\"keyType\" is \"ecdsa-p256\" or \"rsa-2048\", found \"\(text)\"", value, memberPath)
                }
            case "hosts":
                switch value.stringValue {
                case "config": settings.configHosts = true
                case "none": settings.configHosts = false
                default:
                    fail(
                        "acme.hosts",
                        "\"hosts\" is \"config\" (every exact host of the config without a certificate file) or \"none\" "
                            + "(only on demand)",
                        value,
                        memberPath
                    )
                }
            case "onDemand":
                if let flag = value.boolValue {
                    settings.onDemand = flag ? ACMESettings.OnDemand() : nil
                    continue
                }
                guard let fields = reader.object(value, memberPath, what: "true, false or {\"ask\", \"retryAfterFailure\"}") else {
                    valid = false
                    continue
                }
                reader.checkKeys(fields, memberPath, known: ["ask", "retryAfterFailure", "comment"], context: "onDemand")
                var onDemand = ACMESettings.OnDemand()
                if let askNode = value["ask"], let ask = nonEmptyString(askNode, memberPath.key("ask")) {
                    if ask.hasPrefix("http://") || ask.hasPrefix("https://") {
                        onDemand.ask = ask
                    } else {
                        fail("acme.ask", "\"ask\" must be an http:// or https:// URL, found \"\(ask)\"", askNode, memberPath.key("ask"))
                    }
                }
                if let retryNode = value["retryAfterFailure"] {
                    if case .number(let text) = retryNode.value, let seconds = Int(text), seconds >= 1 {
                        onDemand.retryAfterFailure = seconds
                    } else {
                        reader.typeMismatch(retryNode, memberPath.key("retryAfterFailure"), expected: "a whole number of seconds ≥ 1")
                        valid = false
                    }
                }
                settings.onDemand = onDemand
            case "challenges":
                guard let items = reader.stringArray(value, memberPath) else {
                    valid = false
                    continue
                }
                var chosen: [ACMESettings.Challenge] = []
                for item in items {
                    if let challenge = ACMESettings.Challenge(rawValue: item.value) {
                        if !chosen.contains(challenge) { chosen.append(challenge) }
                    } else {
                        reader.report(
                            .error,
                            "acme.challenge",
                            "\"\(item.value)\" is not a challenge type; use \"http-01\", \"tls-alpn-01\" or \"dns-01\"",
                            item.origin.location,
                            item.origin.path
                        )
                        valid = false
                    }
                }
                if chosen.isEmpty && valid { fail("acme.challenge", "\"challenges\" lists no challenge type", value, memberPath) }
                settings.challenges = chosen
            case "dnsHook": settings.dnsHook = nonEmptyString(value, memberPath)
            case "retryAfterFailure":
                if let seconds = wholeNumber(value, memberPath, in: 1...Int.max, expected: "a whole number of seconds ≥ 1") {
                    settings.retryAfterFailure = seconds
                }
            case "ordersPerHour", "ordersPerDomainPerWeek":
                if let count = wholeNumber(value, memberPath, in: 1...100_000, expected: "a whole number from 1 to 100000") {
                    if member.key == "ordersPerHour" { settings.ordersPerHour = count } else { settings.ordersPerDomainPerWeek = count }
                }
            case "lockStaleAfter":
                if let seconds = wholeNumber(value, memberPath, in: 30...86_400, expected: "a whole number of seconds from 30 to 86400") {
                    settings.lockStaleAfter = seconds
                }
            case "maxConcurrentOrders":
                if let count = wholeNumber(value, memberPath, in: 1...100, expected: "a whole number from 1 to 100") {
                    settings.maxConcurrentOrders = count
                }
            default: break
            }
        }
        if !settings.agreeToTerms {
            reader.report(
                .error,
                "acme.terms",
                "set \"agreeToTerms\": true to accept the CA's terms of service (Let's Encrypt: "
                    + "https://letsencrypt.org/repository/); the server cannot create an account without it",
                node.location,
                path.key("agreeToTerms")
            )
            valid = false
        }
        if settings.storage.isEmpty, node["storage"] == nil, !storageInDatabase {
            reader.report(
                .error,
                "acme.storage",
                "\"storage\" names the directory for the account key and certificates (shared by replicas: a "
                    + "ReadWriteMany volume, NFS or EFS), or leave it out with server.linkStore.postgres to keep them in that database",
                node.location,
                path.key("storage")
            )
            valid = false
        }
        if settings.challenges?.contains(.dns01) == true, settings.dnsHook == nil {
            reader.report(
                .error,
                "acme.dns-hook",
                "\"dns-01\" needs \"dnsHook\": the command that publishes the TXT record",
                node.location,
                path.key("dnsHook")
            )
            valid = false
        }
        return valid ? settings : nil
    }
}
