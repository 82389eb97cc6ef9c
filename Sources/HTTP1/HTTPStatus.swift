/// Status codes and their registered reason phrases (RFC 9110 §15, the IANA HTTP Status Code Registry).
public enum HTTPStatus {
    /// The registered reason phrase; an unregistered code gets its class's phrase ("Client Error"), so
    /// a status line is never a placeholder.
    public static func reasonPhrase(_ code: Int) -> String {
        if let phrase = registered[code] { return phrase }
        switch code / 100 {
        case 1: return "Informational"
        case 2: return "Success"
        case 3: return "Redirection"
        case 4: return "Client Error"
        default: return "Server Error"
        }
    }

    public static func isRegistered(_ code: Int) -> Bool { registered[code] != nil }

    private static let registered: [Int: String] = [
        100: "Continue", 101: "Switching Protocols", 103: "Early Hints",
        200: "OK", 201: "Created", 202: "Accepted", 203: "Non-Authoritative Information", 204: "No Content",
        205: "Reset Content", 206: "Partial Content",
        300: "Multiple Choices", 301: "Moved Permanently", 302: "Found", 303: "See Other", 304: "Not Modified",
        305: "Use Proxy", 307: "Temporary Redirect", 308: "Permanent Redirect",
        400: "Bad Request", 401: "Unauthorized", 402: "Payment Required", 403: "Forbidden", 404: "Not Found",
        405: "Method Not Allowed", 406: "Not Acceptable", 407: "Proxy Authentication Required", 408: "Request Timeout",
        409: "Conflict", 410: "Gone", 411: "Length Required", 412: "Precondition Failed", 413: "Content Too Large",
        414: "URI Too Long", 415: "Unsupported Media Type", 416: "Range Not Satisfiable", 417: "Expectation Failed",
        421: "Misdirected Request", 422: "Unprocessable Content", 426: "Upgrade Required", 428: "Precondition Required",
        429: "Too Many Requests", 431: "Request Header Fields Too Large", 451: "Unavailable For Legal Reasons",
        500: "Internal Server Error", 501: "Not Implemented", 502: "Bad Gateway", 503: "Service Unavailable",
        504: "Gateway Timeout", 505: "HTTP Version Not Supported", 511: "Network Authentication Required",
    ]
}
