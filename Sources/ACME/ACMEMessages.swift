import AASA
import Support

/// The CA's resources as RFC 8555 §7.1 describes them, read from its JSON: only what a client needs.
struct ACMEDirectory: Sendable, Equatable {
    var newNonce: String
    var newAccount: String
    var newOrder: String
    /// RFC 9773 (ACME Renewal Information); nil when the CA does not offer it.
    var renewalInfo: String?
    var termsOfService: String?
    var externalAccountRequired = false

    init?(json bytes: [UInt8]) {
        guard let root = JSONParser.parse(bytes, duplicateKeys: .warning).root,
            let newNonce = root["newNonce"]?.stringValue, let newAccount = root["newAccount"]?.stringValue,
            let newOrder = root["newOrder"]?.stringValue
        else { return nil }
        self.newNonce = newNonce
        self.newAccount = newAccount
        self.newOrder = newOrder
        renewalInfo = root["renewalInfo"]?.stringValue
        termsOfService = root["meta"]?["termsOfService"]?.stringValue
        externalAccountRequired = root["meta"]?["externalAccountRequired"]?.boolValue ?? false
    }
}

/// An RFC 7807 problem document from the CA; `type` without the `urn:ietf:params:acme:error:` prefix.
public struct ACMEProblem: Sendable, Equatable, CustomStringConvertible {
    public var type: String
    public var detail: String
    public var status: Int

    static let prefix = "urn:ietf:params:acme:error:"

    init(type: String, detail: String, status: Int) {
        self.type = type.hasPrefix(Self.prefix) ? String(type.dropFirst(Self.prefix.count)) : type
        self.detail = detail
        self.status = status
    }

    init?(_ node: JSONNode?, status: Int) {
        guard let node, let type = node["type"]?.stringValue else { return nil }
        var detail = node["detail"]?.stringValue ?? ""
        // The first subproblem usually names the identifier that failed.
        if let first = node["subproblems"]?.arrayValue?.first, let more = first["detail"]?.stringValue, !detail.contains(more) {
            detail += detail.isEmpty ? more : " (\(more))"
        }
        self.init(type: type, detail: detail, status: status)
    }

    public var description: String { detail.isEmpty ? type : "\(type): \(detail)" }
}

struct ACMEOrder: Sendable, Equatable {
    var status: String
    var authorizations: [String]
    var finalize: String
    var certificate: String?
    var error: ACMEProblem?

    init?(_ node: JSONNode?) {
        guard let node, let status = node["status"]?.stringValue, let finalize = node["finalize"]?.stringValue else { return nil }
        self.status = status
        self.finalize = finalize
        authorizations = node["authorizations"]?.arrayValue?.compactMap(\.stringValue) ?? []
        certificate = node["certificate"]?.stringValue
        error = ACMEProblem(node["error"], status: 0)
    }
}

struct ACMEAuthorization: Sendable, Equatable {
    var status: String
    var domain: String
    var wildcard: Bool
    var challenges: [ACMEChallenge]

    init?(_ node: JSONNode?) {
        guard let node, let status = node["status"]?.stringValue, let domain = node["identifier"]?["value"]?.stringValue else {
            return nil
        }
        self.status = status
        self.domain = domain
        wildcard = node["wildcard"]?.boolValue ?? false
        challenges = node["challenges"]?.arrayValue?.compactMap(ACMEChallenge.init) ?? []
    }

    /// Why validation failed: the first challenge error the CA recorded.
    var failure: ACMEProblem? { challenges.lazy.compactMap(\.error).first }
}

struct ACMEChallenge: Sendable, Equatable {
    var type: String
    var url: String
    var token: String
    var status: String
    var error: ACMEProblem?

    init?(_ node: JSONNode) {
        guard let type = node["type"]?.stringValue, let url = node["url"]?.stringValue else { return nil }
        self.type = type
        self.url = url
        token = node["token"]?.stringValue ?? ""
        status = node["status"]?.stringValue ?? "pending"
        error = ACMEProblem(node["error"], status: 0)
    }
}

/// RFC 9773 §4.2: the window in which the CA suggests renewing.
struct RenewalWindow: Sendable, Equatable {
    var start: Int
    var end: Int
    /// The CA's Retry-After (seconds): when to ask again (RFC 9773 §4.3).
    var retryAfter: Int?

    init?(json bytes: [UInt8]) {
        guard let root = JSONParser.parse(bytes, duplicateKeys: .warning).root,
            let startText = root["suggestedWindow"]?["start"]?.stringValue, let endText = root["suggestedWindow"]?["end"]?.stringValue,
            let start = CivilTime.parseRFC3339(startText), let end = CivilTime.parseRFC3339(endText), end >= start
        else { return nil }
        self.start = start
        self.end = end
    }

    init(start: Int, end: Int, retryAfter: Int? = nil) {
        self.start = start
        self.end = end
        self.retryAfter = retryAfter
    }
}
