/// A response built once (when the config loads, or once per error kind): the status line, every header
/// but `Date` and `Connection`, `Content-Length`, and the body.
///
/// Sending it copies these bytes and the lines that change per send into the connection's output
/// (``ResponseEncoder``), so serving a document builds nothing.
public final class PreparedResponse: Sendable {
    public let status: Int
    /// Status line and headers, each line ending in CRLF, without `Date`, `Connection` and the blank line.
    public let head: [UInt8]
    public let body: [UInt8]

    /// `headers` must not include `Date`, `Connection` or `Content-Length`: the encoder owns those.
    public init(status: Int, headers: [(String, String)], body: [UInt8]) {
        self.status = status
        var text = ResponseEncoder.statusLine(status)
        for (name, value) in headers { text += "\(name): \(value)\r\n" }
        text += "Content-Length: \(body.count)\r\n"
        head = Array(text.utf8)
        self.body = body
    }
}

/// What the `Connection` header of a response says.
public enum ConnectionDirective: Sendable, Equatable {
    /// Persistent by default (HTTP/1.1): no header.
    case none
    case close
    /// Confirms a persistent HTTP/1.0 connection.
    case keepAlive
}

/// Frames responses: one status line format, one place that adds `Date`, `Connection` and the blank line.
public enum ResponseEncoder {
    /// `HTTP/1.1 404 Not Found\r\n`.
    public static func statusLine(_ status: Int) -> String {
        "HTTP/1.1 \(status) \(HTTPStatus.reasonPhrase(status))\r\n"
    }

    static let connectionClose = Array("Connection: close\r\n".utf8)
    static let connectionKeepAlive = Array("Connection: keep-alive\r\n".utf8)

    /// Appends `response` to `output` with the `Date` line (``HTTPDate/line(unixSeconds:)``) and the
    /// connection directive; HEAD answers leave the body out. Returns the bytes appended.
    @discardableResult
    public static func append(
        _ response: PreparedResponse,
        dateLine: [UInt8],
        connection: ConnectionDirective,
        includeBody: Bool,
        to output: inout [UInt8]
    ) -> Int {
        let before = output.count
        output.append(contentsOf: response.head)
        output.append(contentsOf: dateLine)
        switch connection {
        case .none: break
        case .close: output.append(contentsOf: connectionClose)
        case .keepAlive: output.append(contentsOf: connectionKeepAlive)
        }
        output.append(0x0D)
        output.append(0x0A)
        if includeBody { output.append(contentsOf: response.body) }
        return output.count - before
    }
}
