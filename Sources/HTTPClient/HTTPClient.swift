public import HTTP1
import Posix
public import TLS

/// An absolute http:// or https:// URL, taken apart.
public struct ClientURL: Sendable, Equatable, CustomStringConvertible {
    public var https: Bool
    public var host: String
    public var port: Int
    /// Path and query, starting with `/`.
    public var target: String

    public init?(_ text: String) {
        let rest: Substring
        if text.hasPrefix("https://") {
            https = true
            rest = text.dropFirst(8)
        } else if text.hasPrefix("http://") {
            https = false
            rest = text.dropFirst(7)
        } else {
            return nil
        }
        let authorityEnd = rest.firstIndex { $0 == "/" || $0 == "?" } ?? rest.endIndex
        let authority = rest[..<authorityEnd]
        var path = String(rest[authorityEnd...])
        if path.isEmpty || path.hasPrefix("?") { path = "/" + path }
        target = path
        guard !authority.isEmpty, !authority.contains("@") else { return nil }
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { return nil }
            host = String(authority[authority.index(after: authority.startIndex)..<close])
            let after = authority[authority.index(after: close)...]
            if after.isEmpty {
                port = https ? 443 : 80
            } else {
                guard after.hasPrefix(":"), let number = Int(after.dropFirst()), (1...65535).contains(number) else { return nil }
                port = number
            }
        } else if let colon = authority.lastIndex(of: ":") {
            host = String(authority[..<colon])
            guard let number = Int(authority[authority.index(after: colon)...]), (1...65535).contains(number) else { return nil }
            port = number
        } else {
            host = String(authority)
            port = https ? 443 : 80
        }
        host = host.lowercased()
        guard !host.isEmpty else { return nil }
    }

    /// The Host header's value: the port only when it is not the scheme's default.
    public var hostHeader: String {
        let name = host.contains(":") ? "[\(host)]" : host
        return port == (https ? 443 : 80) ? name : "\(name):\(port)"
    }

    public var description: String { "\(https ? "https" : "http")://\(hostHeader)\(target)" }
}

/// Why a request got no response.
public struct HTTPClientError: Error, Sendable, CustomStringConvertible {
    public var message: String
    public var description: String { message }
}

/// Blocking HTTP/1.1 requests on a fresh connection each (`Connection: close`), for the server's own
/// outgoing calls (ACME, the on-demand `ask` URL): certificates verified against the system's roots plus
/// any extra anchors, one deadline for the whole exchange. Runs on worker threads, never an event loop.
public struct HTTPClient: Sendable {
    let tls: TLSClientContext
    public var userAgent: String

    public init(extraAnchors: [String] = [], userAgent: String) throws(TLSError) {
        tls = try TLSClientContext(extraAnchors: extraAnchors)
        self.userAgent = userAgent
    }

    public func send(
        _ method: String,
        _ url: ClientURL,
        headers: [(String, String)] = [],
        body: [UInt8] = [],
        timeoutMilliseconds: Int = 30_000
    ) -> Result<ParsedResponse, HTTPClientError> {
        let deadline = Posix.monotonicMilliseconds() + Int64(timeoutMilliseconds)
        func remaining() -> Int32 { Int32(clamping: max(0, deadline - Posix.monotonicMilliseconds())) }
        func failure(_ message: String) -> Result<ParsedResponse, HTTPClientError> { .failure(HTTPClientError(message: message)) }
        let addresses: [String]
        switch Posix.resolve(url.host, timeoutMilliseconds: remaining()) {
        case .success(let found): addresses = found
        case .failure(let error): return failure("cannot resolve \(url.host): \(error.message)")
        }
        var connection: ClientConnection?
        var lastError = "no address"
        for address in addresses where connection == nil {
            switch Posix.connect(address: address, port: url.port, timeoutMilliseconds: remaining()) {
            case .success(let socket): connection = ClientConnection(fd: socket, deadline: deadline)
            case .failure(let error): lastError = "\(error)"
            }
        }
        guard let connection else { return failure("cannot connect to \(url.hostHeader): \(lastError)") }
        if url.https {
            switch connection.startTLS(tls, serverName: url.host) {
            case .done(let session):
                guard let peer = session.peerCertificate else { return failure("\(url.hostHeader) sent no certificate") }
                if let problem = peer.verificationError {
                    return failure("the certificate of \(url.hostHeader) is not trusted: \(problem)")
                }
            case .couldNotStart: return failure("could not start a TLS session")
            case .timedOut: return failure("the TLS handshake with \(url.hostHeader) timed out")
            case .closed: return failure("\(url.hostHeader) closed the connection during the TLS handshake")
            case .failed(let error): return failure("TLS with \(url.hostHeader) failed: \(error)")
            }
        }
        var request = "\(method) \(url.target) HTTP/1.1\r\nHost: \(url.hostHeader)\r\nUser-Agent: \(userAgent)\r\nConnection: close\r\n"
        for (name, value) in headers { request += "\(name): \(value)\r\n" }
        if !body.isEmpty || method == "POST" { request += "Content-Length: \(body.count)\r\n" }
        switch connection.send(Array((request + "\r\n").utf8) + body) {
        case .sent: break
        case .timedOut: return failure("\(url.hostHeader) did not take the request in time")
        case .closed: return failure("\(url.hostHeader) closed the connection while the request was sent")
        }
        switch connection.receive(isHEAD: method == "HEAD", bodyLimit: 4 << 20) {
        case .response(let response): return .success(response)
        case .malformed(let message): return failure("\(url.hostHeader) sent a malformed response: \(message)")
        case .timedOut: return failure("\(url.hostHeader) did not answer \(method) \(url.target) in time")
        case .closedEarly: return failure("\(url.hostHeader) closed the connection before the response was complete")
        }
    }
}
