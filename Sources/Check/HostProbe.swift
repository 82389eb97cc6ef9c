import Gzip
import HTTP1
import Posix
import TLS

/// How `check` reaches hosts.
public struct ProbeOptions: Sendable {
    /// Seconds for one host's whole check: DNS, connect, TLS and every request.
    public var timeout: Double = 10
    /// `--connect ADDR[:PORT]`: every host at this address.
    public var connect: AddressOverride?
    /// `--resolve HOST:PORT:ADDR`.
    public var resolve: [AddressOverride] = []
    public var cdn = false
    /// Replaces scheme, host and port of Apple's CDN (`--cdn-base`), keeping `/a/v1/<host>`.
    public var cdnBase = CheckTarget(scheme: .https, host: "app-site-association.cdn-apple.com")

    public init() {}
}

/// The I/O of a check: connects (never following anything), speaks TLS and HTTP/1.1 with its own client,
/// and records what it saw. Every step is bounded by the host's deadline.
struct HostProbe: Sendable {
    static let botAgent = "AASA-Bot/1.0.0"
    static let browserAgent =
        "Mozilla/5.0 (iPhone; CPU iPhone OS 18_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.0 Mobile/15E148 Safari/604.1"

    let options: ProbeOptions
    let tls: TLSClientContext

    /// Google's Digital Asset Links fetcher, as it identifies itself in server logs.
    static let googleAgent = "GoogleAssociationService"

    func observe(_ target: CheckTarget, apple: Bool = true, android: Bool = false) -> HostObservation {
        var observation = HostObservation(target: target, checkedAt: Int(Posix.unixTime()))
        let deadline = Posix.monotonicMilliseconds() + Int64(options.timeout * 1000)
        var port = target.port
        let address: String
        if let connect = options.connect {
            address = connect.address
            port = connect.port ?? port
        } else if let pinned = options.resolve.first(where: { $0.host == target.host && $0.port == target.port }) {
            address = pinned.address
        } else if ServerSettingsAddress.isLiteral(target.host) {
            address = target.host
        } else {
            switch Posix.resolve(target.host) {
            case .failure(let error):
                observation.failure = .dns(message: error.message, notFound: error.isNotFound)
                return observation
            case .success(let addresses):
                guard let first = addresses.first else {
                    observation.failure = .dns(message: "no address", notFound: true)
                    return observation
                }
                address = first
            }
        }
        observation.address = address.contains(":") ? "[\(address)]:\(port)" : "\(address):\(port)"
        let path = "/.well-known/apple-app-site-association"
        var plan: [(WritableKeyPath<HostObservation, Exchange?>, String, String, String)] = [
            (\.wellKnown, "GET", path, Self.botAgent),
            (\.wellKnownHead, "HEAD", path, Self.botAgent),
            (\.wellKnownBrowser, "GET", path, Self.browserAgent),
            (\.rootPath, "GET", "/apple-app-site-association", Self.botAgent),
        ]
        if !apple { plan.removeAll() }
        if android { plan.append((\.assetLinks, "GET", "/.well-known/assetlinks.json", Self.googleAgent)) }
        for (index, (slot, method, requestPath, agent)) in plan.enumerated() {
            let result = exchange(
                target: target,
                address: address,
                port: port,
                method: method,
                path: requestPath,
                userAgent: agent,
                deadline: deadline
            )
            switch result {
            case .failure(let failure):
                // No connection at all: that is the finding, and the other requests would say the same.
                observation.failure = failure
                return observation
            case .success(let (exchange, session)):
                observation[keyPath: slot] = exchange
                if index == 0, let session {
                    observation.tlsVersion = session.version
                    observation.certificate = session.certificate
                }
            }
        }
        if options.cdn {
            let base = options.cdnBase
            var cdnAddress = base.host
            if let pinned = options.resolve.first(where: { $0.host == base.host && $0.port == base.port }) {
                cdnAddress = pinned.address
            } else if !ServerSettingsAddress.isLiteral(base.host), case .success(let addresses) = Posix.resolve(base.host),
                let first = addresses.first
            {
                cdnAddress = first
            }
            let cdnDeadline = max(deadline, Posix.monotonicMilliseconds() + Int64(options.timeout * 1000))
            switch exchange(
                target: base,
                address: cdnAddress,
                port: base.port,
                method: "GET",
                path: "/a/v1/\(target.host)",
                userAgent: Self.botAgent,
                deadline: cdnDeadline
            ) {
            case .success(let (exchange, _)): observation.cdn = exchange
            case .failure(let failure): observation.cdn = Exchange(request: "GET \(base.origin)/a/v1/\(target.host)", failure: "\(failure)")
            }
        }
        return observation
    }

    /// What the TLS handshake showed.
    struct SessionFacts {
        var version: String
        var certificate: CertificateFacts?
    }

    /// One request on a fresh connection (`Connection: close`), and what its TLS handshake showed.
    private func exchange(
        target: CheckTarget,
        address: String,
        port: Int,
        method: String,
        path: String,
        userAgent: String,
        deadline: Int64
    ) -> Result<(Exchange, SessionFacts?), ConnectionFailure> {
        var description = "\(method) \(path)"
        if userAgent != Self.botAgent { description += " (browser User-Agent)" }
        func remaining() -> Int32 { Int32(clamping: max(0, deadline - Posix.monotonicMilliseconds())) }
        let fd: Int32
        switch Posix.connect(address: address, port: port, timeoutMilliseconds: remaining()) {
        case .failure(let error):
            if error == .timedOut { return .failure(.timedOut(stage: "connecting to \(address) port \(port)")) }
            if error.isRefused { return .failure(.refused(address: "\(address):\(port)")) }
            if case .failed(let system) = error { return .failure(.unreachable(message: system.reason.lowercased())) }
            return .failure(.unreachable(message: "\(error)"))
        case .success(let socket):
            fd = socket
        }
        defer { Posix.close(fd) }
        var session: TLSSession?
        var facts: SessionFacts?
        if target.scheme == .https {
            guard let created = tls.session(fd: fd, serverName: target.host) else {
                return .failure(.tls(kind: .other, message: "could not start a TLS session"))
            }
            session = created
            handshake: while true {
                switch created.handshake() {
                case .done:
                    break handshake
                case .wouldBlock(let readiness):
                    guard Posix.wait(fd, for: readiness, timeoutMilliseconds: remaining()), remaining() > 0 else {
                        return .failure(.timedOut(stage: "the TLS handshake"))
                    }
                case .closed:
                    return .failure(.tls(kind: .other, message: "the server closed the connection during the TLS handshake"))
                case .failed(let failure):
                    return .failure(.tls(kind: Self.kind(failure.kind), message: failure.description))
                }
            }
            facts = SessionFacts(version: created.protocolVersion, certificate: created.peerCertificate.map(Self.facts))
        }
        let request =
            "\(method) \(path) HTTP/1.1\r\nHost: \(target.port == (target.scheme == .https ? 443 : 80) ? target.host : "\(target.host):\(target.port)")\r\n"
            + "User-Agent: \(userAgent)\r\nAccept: */*\r\nAccept-Encoding: gzip\r\nConnection: close\r\n\r\n"
        let bytes = Array(request.utf8)
        var sent = 0
        while sent < bytes.count {
            let result = bytes[sent...].withUnsafeBytes { session?.write($0) ?? Posix.write(fd, $0) }
            switch result {
            case .bytes(let count): sent += count
            case .wouldBlock(let readiness):
                guard Posix.wait(fd, for: readiness, timeoutMilliseconds: remaining()), remaining() > 0 else {
                    return .success((Exchange(request: description, failure: "timed out sending the request"), facts))
                }
            case .closed, .failed:
                return .success((Exchange(request: description, failure: "the connection was closed while sending the request"), facts))
            }
        }
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            switch ResponseParser.parse(received, closed: false, isHEAD: method == "HEAD") {
            case .complete(let response, _):
                return .success((Self.decoded(Exchange(request: description, response: response)), facts))
            case .failed(let error):
                return .success((Exchange(request: description, failure: error.message), facts))
            case .incomplete:
                break
            }
            let result = buffer.withUnsafeMutableBytes { session?.read(into: $0) ?? Posix.read(fd, into: $0) }
            switch result {
            case .bytes(let count):
                received += buffer[0..<count]
            case .wouldBlock(let readiness):
                guard Posix.wait(fd, for: readiness, timeoutMilliseconds: remaining()), remaining() > 0 else {
                    let what = received.isEmpty ? "no answer" : "the answer stopped after \(received.count) bytes"
                    return .success(
                        (Exchange(request: description, failure: "timed out: \(what) within the \(options.timeout)-second limit"), facts)
                    )
                }
            case .closed, .failed:
                switch ResponseParser.parse(received, closed: true, isHEAD: method == "HEAD") {
                case .complete(let response, _):
                    return .success((Self.decoded(Exchange(request: description, response: response)), facts))
                case .failed(let error):
                    return .success((Exchange(request: description, failure: error.message), facts))
                case .incomplete:
                    return .success(
                        (Exchange(request: description, failure: "the connection closed before the response was complete"), facts)
                    )
                }
            }
        }
    }

    /// Undoes `Content-Encoding: gzip` (the size Apple holds to 128 KB is the decoded one).
    static func decoded(_ exchange: Exchange) -> Exchange {
        var result = exchange
        guard let response = exchange.response else { return result }
        let encoding = response.header("Content-Encoding")?.lowercased().trimmingSpaces() ?? ""
        switch encoding {
        case "", "identity":
            result.decodedBody = response.body
        case "gzip", "x-gzip", "deflate":
            do {
                result.decodedBody = try Gzip.decompress(response.body, limit: 16 << 20)
            } catch {
                result.decodingError = "the \(encoding) body does not decompress (\(error))"
            }
        default:
            result.decodingError = "Content-Encoding \(encoding) is not one Apple's fetcher can be assumed to decode"
        }
        return result
    }

    static func kind(_ kind: TLSFailure.Kind) -> TLSFailureKind {
        switch kind {
        case .notTLS: return .notTLS
        case .protocolVersion: return .protocolVersion
        case .alert(let text): return .alert(text)
        case .other: return .other
        }
    }

    static func facts(_ certificate: PeerCertificate) -> CertificateFacts {
        CertificateFacts(
            subject: certificate.subject,
            issuer: certificate.issuer,
            names: certificate.names,
            notBefore: certificate.notBefore,
            notAfter: certificate.notAfter,
            verificationError: certificate.verificationError,
            selfSigned: certificate.selfSigned,
            hostnameMismatch: certificate.hostnameMismatch,
            expired: certificate.expired,
            notYetValid: certificate.notYetValid
        )
    }
}

enum ServerSettingsAddress {
    /// An IP literal needs no DNS.
    static func isLiteral(_ host: String) -> Bool {
        host.contains(":") || (host.split(separator: ".").count == 4 && host.allSatisfy { $0.isNumber || $0 == "." })
    }
}

extension String {
    func trimmingSpaces() -> String {
        var text = Substring(self)
        while text.first == " " || text.first == "\t" { text = text.dropFirst() }
        while text.last == " " || text.last == "\t" { text = text.dropLast() }
        return String(text)
    }
}
