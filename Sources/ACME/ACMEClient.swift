import AASA
import HTTP1
import HTTPClient
import Posix
import Support
import TLS

/// Why an ACME exchange failed, in the words an operator reads in the log.
public enum ACMEError: Error, Sendable, CustomStringConvertible {
    /// The CA answered with a problem document; `retryAfter` in seconds when it said.
    case refused(ACMEProblem, retryAfter: Int?)
    /// No answer: the CA is down, unreachable or too slow.
    case unreachable(String)
    /// The CA answered something this client cannot use.
    case unexpected(String)
    /// A local step failed: storage, keys, the DNS hook.
    case local(String)
    /// The CA issued the certificate and the storage would not take it: kept in memory, stored later.
    case unstored(String)
    /// Another replica took over the host's lock mid-order: not a failure of the host's, nothing recorded.
    case superseded(String)

    public var description: String {
        switch self {
        case .refused(let problem, let retryAfter):
            return "the CA refused: \(problem)" + (retryAfter.map { ", retrying after \(Durations.words($0))" } ?? "")
        case .unreachable(let message): return "the CA did not answer: \(message)"
        case .unexpected(let message): return "the CA answered unexpectedly: \(message)"
        case .local(let message), .unstored(let message), .superseded(let message): return message
        }
    }

    var retryAfter: Int? {
        if case .refused(_, let seconds) = self { return seconds }
        return nil
    }

    /// The CA was down, unreachable, slow or failing on its side (5xx) — not refusing this order: worth
    /// trying again in seconds, not after the full backoff.
    var isTransient: Bool {
        switch self {
        case .unreachable, .unstored: return true
        case .refused(let problem, let retryAfter): return retryAfter == nil && (problem.status >= 500 || problem.type == "serverInternal")
        case .unexpected, .local, .superseded: return false
        }
    }
}

/// One CA's protocol, blocking, for a worker thread: the directory, nonces (a `badNonce` is retried with the
/// fresh nonce its error carries), signed POSTs, the account, orders, authorizations, finalization and
/// the certificate download.
final class ACMEClient: @unchecked Sendable {
    let directoryURL: String
    let http: HTTPClient
    let accountKey: SigningKey
    private(set) var directory: ACMEDirectory?
    private(set) var accountURL: String?
    private var nonce: String?
    /// Told of every `badNonce` answer (counted for /metrics).
    var onBadNonce: () -> Void = {}
    /// badNonce answers retried in a row before giving up.
    static let nonceRetries = 8

    init(directoryURL: String, http: HTTPClient, accountKey: SigningKey, accountURL: String? = nil) {
        self.directoryURL = directoryURL
        self.http = http
        self.accountKey = accountKey
        self.accountURL = accountURL
    }

    func loadDirectory() throws(ACMEError) -> ACMEDirectory {
        if let directory { return directory }
        guard let url = ClientURL(directoryURL) else { throw .local("the directory URL \(directoryURL) is not a URL") }
        let response = try send("GET", url)
        guard response.status == 200, let parsed = ACMEDirectory(json: response.body) else {
            throw .unexpected("the directory \(directoryURL) answered \(response.status) without newNonce, newAccount and newOrder")
        }
        directory = parsed
        return parsed
    }

    /// Registers the account key (or finds its existing account: RFC 8555 §7.3.1 answers 200 for a known
    /// key) and returns the account URL.
    func register(email: String?, externalAccount: (keyID: String, hmacKey: [UInt8])?) throws(ACMEError) -> String {
        let directory = try loadDirectory()
        var payload: [(String, JSONOutput)] = [("termsOfServiceAgreed", .bool(true))]
        if let email { payload.append(("contact", .array([.string("mailto:\(email)")]))) }
        if let externalAccount {
            payload.append(
                (
                    "externalAccountBinding",
                    JWS.externalAccountBinding(
                        accountKey: accountKey,
                        keyID: externalAccount.keyID,
                        hmacKey: externalAccount.hmacKey,
                        url: directory.newAccount
                    )
                )
            )
        } else if directory.externalAccountRequired {
            throw .local("this CA requires External Account Binding: set acme.externalAccount (keyId and hmacKeyFile)")
        }
        let response = try post(directory.newAccount, payload: .object(payload), signer: .jwk)
        guard let location = response.header("Location") else { throw .unexpected("newAccount answered without a Location") }
        accountURL = location
        return location
    }

    /// A new order for `names`; returns its URL and state.
    func newOrder(_ names: [String], replacing: String? = nil) throws(ACMEError) -> (url: String, order: ACMEOrder) {
        let directory = try loadDirectory()
        var payload: [(String, JSONOutput)] = [
            ("identifiers", .array(names.map { .object([("type", .string("dns")), ("value", .string($0))]) }))
        ]
        // RFC 9773 §5: tell a CA that offers renewal information which certificate this one replaces.
        if let replacing, directory.renewalInfo != nil { payload.append(("replaces", .string(replacing))) }
        let response = try post(directory.newOrder, payload: .object(payload), signer: try accountSigner())
        guard let location = response.header("Location"), let order = ACMEOrder(Self.json(response)) else {
            throw .unexpected("newOrder answered \(response.status) without an order")
        }
        return (location, order)
    }

    /// The Retry-After of the last order or authorization poll, in seconds (RFC 8555 §7.1.6: how long to
    /// wait before asking again).
    private(set) var pollAfter: Int?

    func order(_ url: String) throws(ACMEError) -> ACMEOrder {
        let response = try post(url, payload: nil, signer: try accountSigner())
        pollAfter = response.header("Retry-After").flatMap { Self.retryAfterSeconds($0, now: Int(Posix.unixTime())) }
        guard let order = ACMEOrder(Self.json(response)) else { throw .unexpected("the order \(url) did not parse") }
        return order
    }

    func authorization(_ url: String) throws(ACMEError) -> ACMEAuthorization {
        let response = try post(url, payload: nil, signer: try accountSigner())
        pollAfter = response.header("Retry-After").flatMap { Self.retryAfterSeconds($0, now: Int(Posix.unixTime())) }
        guard let authorization = ACMEAuthorization(Self.json(response)) else {
            throw .unexpected("the authorization \(url) did not parse")
        }
        return authorization
    }

    /// Tells the CA the challenge is ready to be validated (an empty object, RFC 8555 §7.5.1).
    func respond(to challenge: ACMEChallenge) throws(ACMEError) {
        _ = try post(challenge.url, payload: .object([]), signer: try accountSigner())
    }

    func finalize(_ order: ACMEOrder, csr: [UInt8]) throws(ACMEError) -> ACMEOrder {
        let response = try post(order.finalize, payload: .object([("csr", .string(Base64URL.encode(csr)))]), signer: try accountSigner())
        guard let updated = ACMEOrder(Self.json(response)) else { throw .unexpected("finalize answered without an order") }
        return updated
    }

    /// The certificate chain, PEM, leaf first.
    func certificate(_ url: String) throws(ACMEError) -> [UInt8] {
        let response = try post(url, payload: nil, signer: try accountSigner(), accept: "application/pem-certificate-chain")
        guard String(decoding: response.body.prefix(64), as: UTF8.self).contains("-----BEGIN CERTIFICATE-----") else {
            throw .unexpected("the certificate download was not a PEM chain")
        }
        return response.body
    }

    /// RFC 9773: the suggested renewal window of a certificate, when the CA offers renewal information.
    func renewalWindow(certificateID: String) throws(ACMEError) -> RenewalWindow? {
        guard let base = try loadDirectory().renewalInfo else { return nil }
        let trimmed = base.hasSuffix("/") ? String(base.dropLast()) : base
        guard let url = ClientURL("\(trimmed)/\(certificateID)") else { return nil }
        let response = try send("GET", url)
        guard response.status == 200 else { return nil }
        var window = RenewalWindow(json: response.body)
        window?.retryAfter = response.header("Retry-After").flatMap { Self.retryAfterSeconds($0, now: Int(Posix.unixTime())) }
        return window
    }

    /// Seconds to wait before polling again: the CA's Retry-After when it gave one (capped), else `fallback`.
    static func retryAfter(_ response: ParsedResponse, fallback: Int) -> Int {
        guard let value = response.header("Retry-After") else { return fallback }
        return retryAfterSeconds(value, now: Int(Posix.unixTime())) ?? fallback
    }

    /// `Retry-After` as delay-seconds or an HTTP-date (RFC 9110 §10.2.3), in seconds from `now`.
    static func retryAfterSeconds(_ value: String, now: Int) -> Int? {
        let trimmed = value.trimmingSpacesAndTabs()
        if let seconds = Int(trimmed), seconds >= 0 { return seconds }
        return HTTPDate.parse(trimmed).map { max(0, $0 - now) }
    }

    private func accountSigner() throws(ACMEError) -> JWS.Signer {
        guard let accountURL else { throw .local("no ACME account yet") }
        return .keyID(accountURL)
    }

    /// A signed POST; a `badNonce` is retried with the nonce its answer carries. Any other problem throws.
    func post(_ target: String, payload: JSONOutput?, signer: JWS.Signer, accept: String? = nil) throws(ACMEError) -> ParsedResponse {
        guard let url = ClientURL(target) else { throw .unexpected("\(target) is not a URL") }
        var attempt = 0
        while true {
            attempt += 1
            let nonce = try takeNonce()
            let body: [UInt8]
            do {
                body = try JWS.signed(payload: payload, url: target, nonce: nonce, key: accountKey, signer: signer)
            } catch {
                throw .local("signing with the account key failed: \(error)")
            }
            var headers = [("Content-Type", "application/jose+json")]
            if let accept { headers.append(("Accept", accept)) }
            let response = try send("POST", url, headers: headers, body: body)
            if response.status < 400 { return response }
            let problem =
                ACMEProblem(Self.json(response), status: response.status)
                ?? ACMEProblem(
                    type: "http-\(response.status)",
                    detail: String(decoding: response.body.prefix(200), as: UTF8.self),
                    status: response.status
                )
            if problem.type == "badNonce" {
                onBadNonce()
                if attempt < Self.nonceRetries { continue }
            }
            throw .refused(
                problem,
                retryAfter: response.header("Retry-After").flatMap { Self.retryAfterSeconds($0, now: Int(Posix.unixTime())) }
            )
        }
    }

    private func takeNonce() throws(ACMEError) -> String {
        if let nonce {
            self.nonce = nil
            return nonce
        }
        let directory = try loadDirectory()
        guard let url = ClientURL(directory.newNonce) else { throw .unexpected("newNonce is not a URL") }
        _ = try send("HEAD", url)
        guard let fresh = nonce else { throw .unexpected("newNonce answered without a Replay-Nonce") }
        self.nonce = nil
        return fresh
    }

    private func send(
        _ method: String,
        _ url: ClientURL,
        headers: [(String, String)] = [],
        body: [UInt8] = []
    ) throws(ACMEError) -> ParsedResponse {
        switch http.send(method, url, headers: headers, body: body, timeoutMilliseconds: 30_000) {
        case .success(let response):
            if let replay = response.header("Replay-Nonce") { nonce = replay }
            if response.status >= 500 && method != "POST" {
                throw .unreachable("\(url) answered \(response.status)")
            }
            return response
        case .failure(let error):
            throw .unreachable(error.message)
        }
    }

    static func json(_ response: ParsedResponse) -> JSONNode? { JSONParser.parse(response.body, duplicateKeys: .warning).root }
}

/// "3 h", "12 min", "40 s": durations in log lines.
public enum Durations {
    public static func words(_ seconds: Int) -> String {
        if seconds >= 86_400 && seconds % 86_400 == 0 || seconds >= 3 * 86_400 { return "\(seconds / 86_400) d" }
        if seconds >= 3600 { return seconds % 3600 == 0 || seconds >= 3 * 3600 ? "\(seconds / 3600) h" : "\(seconds / 60) min" }
        if seconds >= 60 { return "\(seconds / 60) min" }
        return "\(seconds) s"
    }
}
