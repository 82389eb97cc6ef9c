import Support

/// Request methods. Method names are case-sensitive (RFC 9110 §9.1): `get` is unknown, hence 501.
public enum HTTPMethod: UInt8, Sendable {
    case get, head, post, put, delete, options, patch, trace, connect, unknown

    public var name: String {
        switch self {
        case .get: return "GET"
        case .head: return "HEAD"
        case .post: return "POST"
        case .put: return "PUT"
        case .delete: return "DELETE"
        case .options: return "OPTIONS"
        case .patch: return "PATCH"
        case .trace: return "TRACE"
        case .connect: return "CONNECT"
        case .unknown: return "OTHER"
        }
    }
}

/// How the request's body is framed (RFC 9112 §6).
public enum BodyFraming: Sendable, Equatable {
    case none
    case length(Int)
    case chunked
}

/// A parsed request head. Text fields are byte ranges into the buffer the head was parsed from, so
/// parsing allocates nothing; they stay valid until the caller consumes those bytes.
public struct RequestHead: Sendable, Equatable {
    public var method: HTTPMethod = .unknown
    public var methodRange: Range<Int> = 0..<0
    /// The request target as sent.
    public var targetRange: Range<Int> = 0..<0
    /// The path of an origin-form or absolute-form target, without the query.
    public var pathRange: Range<Int> = 0..<0
    public var isAsteriskForm = false
    public var minorVersion = 1
    /// The authority that picks the site: an absolute-form target's, else the Host header's (§3.2.2).
    public var hostRange: Range<Int>?
    public var userAgentRange: Range<Int>?
    /// ``FieldValueHash`` of the User-Agent, from the parser's pass over it (nil without one).
    public var userAgentHash: UInt64?
    public var forwardedForRange: Range<Int>?
    /// Present on every cross-origin request a browser makes (the admin listener refuses them).
    public var originRange: Range<Int>?
    /// Sent by `aasa-server check` (`AASA-Server-Check`): its AASA-Bot User-Agent is a test, not Apple.
    public var isCheckProbe = false
    public var contentTypeRange: Range<Int>?
    public var authorizationRange: Range<Int>?
    public var body: BodyFraming = .none
    public var acceptsGzip = false
    /// `Expect: 100-continue`: the client waits for `100 Continue` before it sends the body (RFC 9110 §10.1.1).
    public var expectsContinue = false
    var connectionClose = false
    var connectionKeepAlive = false
    /// Bytes of the buffer this head occupies, leading empty lines and the final CRLF included.
    public var length = 0

    public init() {}

    /// HTTP/1.1 is persistent unless `Connection: close`; HTTP/1.0 only with `Connection: keep-alive` (§9.3).
    public var keepAlive: Bool {
        if connectionClose { return false }
        return minorVersion >= 1 || connectionKeepAlive
    }

    public var isHTTP10: Bool { minorVersion == 0 }
}

/// What ``RequestHeadParser/parse(_:into:)`` found; the head itself is where it was asked to go.
public enum HeadParseStatus: Sendable, Equatable {
    case incomplete
    case complete
    case failed(HTTPError)
}

public enum HeadParseResult: Sendable, Equatable {
    case incomplete
    case complete(RequestHead)
    case failed(HTTPError)
}

extension HTTPMethod {
    init(_ buffer: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) {
        func equals(_ literal: StaticString) -> Bool {
            guard range.count == literal.utf8CodeUnitCount else { return false }
            for offset in 0..<range.count where buffer[range.lowerBound + offset] != literal.utf8Start[offset] { return false }
            return true
        }
        if equals("GET") {
            self = .get
        } else if equals("HEAD") {
            self = .head
        } else if equals("POST") {
            self = .post
        } else if equals("PUT") {
            self = .put
        } else if equals("DELETE") {
            self = .delete
        } else if equals("OPTIONS") {
            self = .options
        } else if equals("PATCH") {
            self = .patch
        } else if equals("TRACE") {
            self = .trace
        } else if equals("CONNECT") {
            self = .connect
        } else {
            self = .unknown
        }
    }
}
