/// A request the server refuses, and how: every case knows its status, and all of them close the
/// connection, because after a malformed head the framing of whatever follows is in doubt (RFC 9112 §2.2).
public enum HTTPError: Error, Sendable, Equatable {
    case badRequest(String)
    case uriTooLong
    case headerFieldsTooLarge(String)
    case payloadTooLarge
    case notImplemented(String)
    case versionNotSupported
    /// The header did not arrive within the header deadline (sent before closing, like HAProxy).
    case requestTimeout
    /// The head arrived, its body did not within the body deadline.
    case bodyTimeout

    public var status: Int {
        switch self {
        case .badRequest: return 400
        case .uriTooLong: return 414
        case .headerFieldsTooLarge: return 431
        case .payloadTooLarge: return 413
        case .notImplemented: return 501
        case .versionNotSupported: return 505
        case .requestTimeout, .bodyTimeout: return 408
        }
    }

    /// What the client is told (a JSON body); specific enough to fix the request.
    public var detail: String {
        switch self {
        case .badRequest(let reason): return reason
        case .uriTooLong: return "request line too long"
        case .headerFieldsTooLarge(let reason): return reason
        case .payloadTooLarge: return "request body too large"
        case .notImplemented(let reason): return reason
        case .versionNotSupported: return "HTTP version not supported; use HTTP/1.1"
        case .requestTimeout: return "request header not received in time"
        case .bodyTimeout: return "request body not received in time"
        }
    }
}

/// Limits on what a client may send (docs/serving.md, docs/config-reference.md); all configurable.
public struct HTTPLimits: Sendable, Equatable {
    public var requestLineBytes: Int
    public var headerBytes: Int
    public var headerCount: Int
    public var bodyBytes: Int

    public init(requestLineBytes: Int = 8192, headerBytes: Int = 16384, headerCount: Int = 100, bodyBytes: Int = 65536) {
        self.requestLineBytes = requestLineBytes
        self.headerBytes = headerBytes
        self.headerCount = headerCount
        self.bodyBytes = bodyBytes
    }
}
