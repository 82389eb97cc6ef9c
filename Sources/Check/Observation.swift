public import HTTP1

/// One HTTP exchange as `check` saw it: the raw response (never a followed redirect), or why there was none.
public struct Exchange: Sendable {
    /// `GET /.well-known/apple-app-site-association (User-Agent: AASA-Bot/1.0.0)`.
    public var request: String
    public var response: ParsedResponse?
    /// A reset, a timeout, a malformed response.
    public var failure: String?
    /// The body with any `Content-Encoding` undone; nil when it could not be decoded.
    public var decodedBody: [UInt8]?
    public var decodingError: String?

    public init(
        request: String,
        response: ParsedResponse? = nil,
        failure: String? = nil,
        decodedBody: [UInt8]? = nil,
        decodingError: String? = nil
    ) {
        self.request = request
        self.response = response
        self.failure = failure
        self.decodedBody = decodedBody
        self.decodingError = decodingError
    }
}

/// Why no exchange with the host was possible.
public enum ConnectionFailure: Error, Sendable, Equatable {
    case dns(message: String, notFound: Bool)
    case refused(address: String)
    case timedOut(stage: String)
    case unreachable(message: String)
    /// The TLS handshake failed; `kind` says what it means.
    case tls(kind: TLSFailureKind, message: String)
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
    public var selfSigned: Bool
    public var hostnameMismatch: Bool
    public var expired: Bool
    public var notYetValid: Bool

    public init(
        subject: String,
        issuer: String,
        names: [String],
        notBefore: Int,
        notAfter: Int,
        verificationError: String?,
        selfSigned: Bool = false,
        hostnameMismatch: Bool = false,
        expired: Bool = false,
        notYetValid: Bool = false
    ) {
        self.subject = subject
        self.issuer = issuer
        self.names = names
        self.notBefore = notBefore
        self.notAfter = notAfter
        self.verificationError = verificationError
        self.selfSigned = selfSigned
        self.hostnameMismatch = hostnameMismatch
        self.expired = expired
        self.notYetValid = notYetValid
    }
}

/// Everything `check` fetched from one host; the evaluation turns it into findings.
public struct HostObservation: Sendable {
    public var target: CheckTarget
    public var address: String?
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
    /// When the check ran (Unix seconds), for certificate expiry.
    public var checkedAt: Int

    public init(target: CheckTarget, checkedAt: Int) {
        self.target = target
        self.checkedAt = checkedAt
    }
}
