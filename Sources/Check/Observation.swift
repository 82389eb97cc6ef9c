public import HTTP1

/// One HTTP exchange as `check` saw it: the raw response (never a followed redirect), or why there was none.
public struct Exchange: Sendable {
    /// `GET /.well-known/apple-app-site-association (User-Agent: AASA-Bot/1.0.0)`.
    public var request: String
    public var response: ParsedResponse?
    /// A reset, a timeout, a malformed response.
    public var failure: String?
    /// Set when the host's time limit ran out: what was being waited for ("the answer to GET /…").
    public var awaiting: String?
    /// The body with any `Content-Encoding` undone; nil when it could not be decoded.
    public var decodedBody: [UInt8]?
    public var decodingError: String?
}

/// In an extension, so the memberwise initializer stays.
extension Exchange {
    /// An exchange that ended when the time limit ran out.
    public init(request: String, awaiting: String) {
        self.init(request: request, failure: "timed out waiting for \(awaiting)")
        self.awaiting = awaiting
    }

    /// An exchange that never got as far as a request.
    public init(request: String, failure: ConnectionFailure) {
        if case .timedOut(let awaiting) = failure {
            self.init(request: request, awaiting: awaiting)
        } else {
            self.init(request: request, failure: failure.words)
        }
    }
}

/// Why no exchange with the host was possible.
public enum ConnectionFailure: Error, Sendable, Equatable {
    /// `name` is the host, or the name given with `--connect` / `--resolve`.
    case dns(name: String, message: String, notFound: Bool)
    case refused(address: String)
    /// The time limit ran out; `awaiting` names what had not come ("the TLS handshake with 10.0.0.5:443").
    case timedOut(awaiting: String)
    case unreachable(message: String)
    /// The TLS handshake failed; `kind` says what it means.
    case tls(kind: TLSFailureKind, message: String)

    /// The failure in words, for places that report it in a sentence of their own.
    public var words: String {
        switch self {
        case .dns(let name, let message, let notFound):
            return notFound ? "\(name) does not resolve (\(message))" : "\(name) could not be resolved: \(message)"
        case .refused(let address): return "\(address) refused the connection"
        case .timedOut(let awaiting): return "timed out waiting for \(awaiting)"
        case .unreachable(let message): return "unreachable: \(message)"
        case .tls(_, let message): return "the TLS handshake failed: \(message)"
        }
    }

    /// The TCP connection itself failed, so another address of the same name may still answer.
    var isConnectFailure: Bool {
        switch self {
        case .refused, .unreachable: return true
        case .timedOut(let awaiting): return awaiting.hasPrefix("the TCP connection")
        case .dns, .tls: return false
        }
    }
}

public enum TLSFailureKind: Sendable, Equatable {
    case notTLS
    case protocolVersion
    case alert(String)
    case other
}

/// The server's certificate as the client saw it.
public struct CertificateFacts: Sendable, Equatable {
    public var subject: String
    public var issuer: String
    public var names: [String]
    public var notBefore: Int
    public var notAfter: Int
    /// Nil when the chain verified against the trust store and the name matched.
    public var verificationError: String?
    public var selfSigned = false
    public var hostnameMismatch = false
    public var expired = false
    public var notYetValid = false
    /// Issued by the local CA of `aasa-server dev` / `dev-cert`.
    public var issuedByDevAuthority = false
}

/// Everything `check` fetched from one host; the evaluation turns it into findings.
public struct HostObservation: Sendable {
    public var target: CheckTarget
    /// The address that answered (or the last one tried), as `10.0.0.5:443`.
    public var address: String?
    /// How the name led to that address, when it is not plain from the target (see `HostProbe.route`).
    public var route: String?
    /// `--timeout`, for messages that name it.
    public var timeLimit: Double = 10
    public var failure: ConnectionFailure?
    public var tlsVersion: String?
    public var certificate: CertificateFacts?
    /// `GET /.well-known/apple-app-site-association` as Apple's CDN sends it.
    public var wellKnown: Exchange?
    public var wellKnownHead: Exchange?
    /// The same GET with a browser's User-Agent.
    public var wellKnownBrowser: Exchange?
    /// `GET /apple-app-site-association`.
    public var rootPath: Exchange?
    /// Apple's CDN copy (with `--cdn`).
    public var cdn: Exchange?
    /// `GET /.well-known/assetlinks.json` as Google's verifier sends it (when Android apps are expected).
    public var assetLinks: Exchange?
    /// `--link`: each path fetched as each kind of visitor (``LinkFindings/visitors``), in that order.
    public var links: [(path: String, visitor: String, exchange: Exchange)] = []
    /// When the check ran (Unix seconds), for certificate expiry.
    public var checkedAt: Int

    public init(target: CheckTarget, checkedAt: Int) {
        self.target = target
        self.checkedAt = checkedAt
    }
}
