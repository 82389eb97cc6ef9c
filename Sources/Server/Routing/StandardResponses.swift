import AASA
import HTTP1

/// The answers that do not depend on the config: errors, 404/405/501, health, `OPTIONS *`.
enum StandardResponses {
    static let jsonHeaders = [("Server", "aasa-server"), ("Content-Type", "application/json"), ("Cache-Control", "no-store")]

    /// A JSON response whose body is `body` plus a newline (so curl output ends cleanly).
    static func json(status: Int, _ body: String, extraHeaders: [(String, String)] = []) -> PreparedResponse {
        PreparedResponse(status: status, headers: jsonHeaders + extraHeaders, body: Array((body + "\n").utf8))
    }

    /// `{"error": "…"}` with the error's status: specific enough for the client to fix the request.
    static func error(status: Int, _ message: String, extraHeaders: [(String, String)] = []) -> PreparedResponse {
        json(status: status, "{\"error\":\(JSONText.quoted(message))}", extraHeaders: extraHeaders)
    }

    static let notFound = error(status: 404, "not found")

    /// An HTTP-01 answer: the key authorization, exactly, as text (RFC 8555 §8.3).
    static func acmeChallenge(_ keyAuthorization: String) -> PreparedResponse {
        PreparedResponse(
            status: 200,
            headers: [("Server", "aasa-server"), ("Content-Type", "text/plain"), ("Cache-Control", "no-store")],
            body: Array(keyAuthorization.utf8)
        )
    }
    static let methodNotAllowed = json(
        status: 405,
        #"{"error":"method not allowed","allow":["GET","HEAD"]}"#,
        extraHeaders: [("Allow", "GET, HEAD")]
    )
    static let notImplemented = error(status: 501, "method not implemented")
    static let health = json(status: 200, #"{"status":"ok"}"#)
    static let noAssetLinks = json(status: 404, #"{"error":"no Android apps are configured for this host"}"#)
    /// `OPTIONS *`: what the server as a whole allows (RFC 9110 §9.3.7).
    static let serverOptions = PreparedResponse(status: 200, headers: [("Server", "aasa-server"), ("Allow", "GET, HEAD")], body: [])
    static let adminOptions = PreparedResponse(status: 200, headers: [("Server", "aasa-server"), ("Allow", "GET, HEAD, POST")], body: [])
}

/// Answers to requests the parser or the state machine refused.
enum ErrorResponses {
    static func response(for error: HTTPError) -> PreparedResponse {
        StandardResponses.error(status: error.status, error.detail)
    }
}
