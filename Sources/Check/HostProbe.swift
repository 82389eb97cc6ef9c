import Gzip
import HTTP1
import HTTPClient
import Posix
import Support
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
    /// Sent with every request besides the fetchers' exact User-Agents (a WAF may treat those differently):
    /// an aasa-server never records a request that carries it as Apple's or Google's fetch.
    static let markHeader = "AASA-Server-Check: 1\r\n"
    static let browserAgent =
        "Mozilla/5.0 (iPhone; CPU iPhone OS 18_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.0 Mobile/15E148 Safari/604.1"

    let options: ProbeOptions
    let tls: TLSClientContext

    /// Google's Digital Asset Links fetcher, as it identifies itself in server logs.
    static let googleAgent = "GoogleAssociationService"

    func observe(_ target: CheckTarget, apple: Bool = true, android: Bool = false, linkPaths: [String] = []) -> HostObservation {
        var observation = HostObservation(target: target, checkedAt: Int(Posix.unixTime()))
        observation.timeLimit = options.timeout
        let deadline = Posix.monotonicMilliseconds() + Int64(options.timeout * 1000)
        let (name, port) = destination(of: target)
        let addresses: [String]
        switch Self.addresses(of: name, deadline: deadline) {
        case .failure(let failure):
            observation.failure = failure
            return observation
        case .success(let found):
            addresses = found
        }
        let path = "/.well-known/apple-app-site-association"
        var plan: [(WritableKeyPath<HostObservation, Exchange?>, String, String, String)] = [
            (\.wellKnown, "GET", path, Self.botAgent),
            (\.wellKnownHead, "HEAD", path, Self.botAgent),
            (\.wellKnownBrowser, "GET", path, Self.browserAgent),
            (\.rootPath, "GET", "/apple-app-site-association", Self.botAgent),
        ]
        if !apple { plan.removeAll() }
        if android { plan.append((\.assetLinks, "GET", "/.well-known/assetlinks.json", Self.googleAgent)) }
        var chosen: String?
        for (index, (slot, method, requestPath, agent)) in plan.enumerated() {
            func attempt(_ address: String) -> Result<(Exchange, SessionFacts?), ConnectionFailure> {
                exchange(
                    target: target,
                    address: address,
                    port: port,
                    method: method,
                    path: requestPath,
                    userAgent: agent,
                    deadline: deadline
                )
            }
            let result: Result<(Exchange, SessionFacts?), ConnectionFailure>
            if let chosen {
                result = attempt(chosen)
            } else {
                // The first request finds an address that answers, as a browser does; the rest use it.
                let first = Self.firstConnecting(addresses, port: port, deadline: deadline, attempt)
                result = first.result
                chosen = first.chosen
                observation.address = Self.hostPort(first.chosen ?? first.lastTried, port)
                observation.route = Self.route(
                    name: name,
                    target: target,
                    addresses: addresses,
                    chosen: first.chosen,
                    refusals: first.refusals
                )
            }
            switch result {
            case .failure(let failure):
                if index == 0 {
                    // No connection at all: that is the finding, and the other requests would say the same.
                    observation.failure = failure
                    return observation
                }
                observation[keyPath: slot] = Exchange(request: "\(method) \(requestPath)", failure: failure)
            case .success(let (exchange, session)):
                observation[keyPath: slot] = exchange
                if index == 0, let session {
                    observation.tlsVersion = session.version
                    observation.certificate = session.certificate
                }
            }
            // The host's time is spent: later requests could only time out too, at a random phase.
            if observation[keyPath: slot]?.awaiting != nil { break }
        }
        if let address = chosen {
            // A click on each link as each kind of visitor: what people without the app get.
            clicks: for path in linkPaths {
                for (visitor, agent) in LinkFindings.visitors {
                    let result = exchange(
                        target: target,
                        address: address,
                        port: port,
                        method: "GET",
                        path: path,
                        userAgent: agent,
                        deadline: deadline
                    )
                    let seen: Exchange
                    switch result {
                    case .failure(let failure): seen = Exchange(request: "GET \(path)", failure: failure)
                    case .success(let (exchange, _)): seen = exchange
                    }
                    observation.links.append((path, visitor, seen))
                    if seen.awaiting != nil { break clicks }
                }
            }
        }
        if options.cdn { observation.cdn = fetchCDNCopy(of: target, deadline: deadline) }
        return observation
    }

    /// The name (or address) and port to connect to: `--connect`, a matching `--resolve`, or the host itself.
    func destination(of target: CheckTarget) -> (name: String, port: Int) {
        if let connect = options.connect { return (connect.address, connect.port ?? target.port) }
        if let pinned = options.resolve.first(where: { $0.host == target.host && $0.port == target.port }) {
            return (pinned.address, target.port)
        }
        return (target.host, target.port)
    }

    /// An address as given, or every address a name resolves to, within the deadline.
    static func addresses(of name: String, deadline: Int64) -> Result<[String], ConnectionFailure> {
        if ServerSettingsAddress.isLiteral(name) { return .success([name]) }
        let remaining = Int32(clamping: max(1, deadline - Posix.monotonicMilliseconds()))
        switch Posix.resolve(name, timeoutMilliseconds: remaining) {
        case .failure(let error):
            if error.timedOut { return .failure(.timedOut(awaiting: "the resolver's answer for \(name)")) }
            return .failure(.dns(name: name, message: error.message, notFound: error.isNotFound))
        case .success(let addresses):
            guard !addresses.isEmpty else { return .failure(.dns(name: name, message: "no address", notFound: true)) }
            return .success(addresses)
        }
    }

    /// Which name led to which address, when that is not plain from the target: a `--connect` or
    /// `--resolve` name, or a name with several addresses some of which did not answer.
    static func route(name: String, target: CheckTarget, addresses: [String], chosen: String?, refusals: [String]) -> String? {
        var parts: [String] = []
        if name != target.host && !ServerSettingsAddress.isLiteral(name) {
            parts.append("\(name) resolves to \(addresses.joined(separator: ", "))")
        } else if addresses.count > 1 {
            parts.append("\(name) has \(addresses.count) addresses")
        }
        if chosen != nil, !refusals.isEmpty {
            parts.append("tried first: " + refusals.joined(separator: "; "))
        } else if chosen == nil, refusals.count > 1 {
            parts.append("every address failed: " + refusals.joined(separator: "; "))
        }
        return parts.isEmpty ? nil : parts.joined(separator: "; ")
    }

    static func hostPort(_ address: String, _ port: Int) -> String {
        address.contains(":") ? "[\(address)]:\(port)" : "\(address):\(port)"
    }

    /// Apple's CDN copy, within what is left of the host's time (never a fresh allowance: `--timeout`
    /// bounds the whole check).
    private func fetchCDNCopy(of target: CheckTarget, deadline: Int64) -> Exchange {
        let base = options.cdnBase
        let request = "GET \(base.origin)/a/v1/\(target.host)"
        guard Posix.monotonicMilliseconds() < deadline else {
            var skipped = Exchange(request: request, failure: "not fetched: the \(Self.seconds(options.timeout)) s limit ran out first")
            skipped.awaiting = "the CDN fetch's turn"
            return skipped
        }
        let name = options.resolve.first(where: { $0.host == base.host && $0.port == base.port })?.address ?? base.host
        let addresses: [String]
        switch Self.addresses(of: name, deadline: deadline) {
        case .failure(let failure): return Exchange(request: request, failure: failure)
        case .success(let found): addresses = found
        }
        let fetched = Self.firstConnecting(addresses, port: base.port, deadline: deadline) { address in
            exchange(
                target: base,
                address: address,
                port: base.port,
                method: "GET",
                path: "/a/v1/\(target.host)",
                userAgent: Self.botAgent,
                deadline: deadline
            )
        }
        switch fetched.result {
        case .success(let (exchange, _)): return exchange
        case .failure(let failure): return Exchange(request: request, failure: failure)
        }
    }

    /// Tries `addresses` (never empty) in turn until one connects: a refused or unreachable address, or one
    /// that does not answer the connection in time, gives way to the next while time is left. `chosen` is
    /// the address that connected (even if what followed failed); `refusals` says why the others did not.
    static func firstConnecting<Success>(
        _ addresses: [String],
        port: Int,
        deadline: Int64,
        _ attempt: (String) -> Result<Success, ConnectionFailure>
    ) -> (result: Result<Success, ConnectionFailure>, chosen: String?, lastTried: String, refusals: [String]) {
        var refusals: [String] = []
        var result = attempt(addresses[0])
        var lastTried = addresses[0]
        for address in addresses.dropFirst() {
            guard case .failure(let failure) = result, failure.isConnectFailure, Posix.monotonicMilliseconds() < deadline else { break }
            refusals.append("\(hostPort(lastTried, port)): \(failure.words)")
            lastTried = address
            result = attempt(address)
        }
        if case .failure(let failure) = result, failure.isConnectFailure {
            if addresses.count > 1 { refusals.append("\(hostPort(lastTried, port)): \(failure.words)") }
            return (result, nil, lastTried, refusals)
        }
        return (result, lastTried, lastTried, refusals)
    }

    /// `5` or `2.5`: a time limit as the user wrote it.
    static func seconds(_ value: Double) -> String {
        value == value.rounded() ? String(Int(value)) : String(value)
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
        let connection: ClientConnection
        switch Posix.connect(address: address, port: port, timeoutMilliseconds: remaining()) {
        case .failure(let error):
            if error == .timedOut { return .failure(.timedOut(awaiting: "the TCP connection to \(Self.hostPort(address, port))")) }
            if error.isRefused { return .failure(.refused(address: Self.hostPort(address, port))) }
            if case .failed(let system) = error { return .failure(.unreachable(message: system.reason.lowercased())) }
            return .failure(.unreachable(message: "\(error)"))
        case .success(let socket):
            connection = ClientConnection(fd: socket, deadline: deadline)
        }
        var facts: SessionFacts?
        if target.scheme == .https {
            switch connection.startTLS(tls, serverName: target.host) {
            case .done(let session):
                facts = SessionFacts(version: session.protocolVersion, certificate: session.peerCertificate.map(Self.facts))
            case .couldNotStart: return .failure(.tls(kind: .other, message: "could not start a TLS session"))
            case .timedOut: return .failure(.timedOut(awaiting: "the TLS handshake with \(Self.hostPort(address, port))"))
            case .closed: return .failure(.tls(kind: .other, message: "the server closed the connection during the TLS handshake"))
            case .failed(let failure): return .failure(.tls(kind: Self.kind(failure.kind), message: failure.description))
            }
        }
        let request =
            "\(method) \(path) HTTP/1.1\r\nHost: \(target.port == (target.scheme == .https ? 443 : 80) ? target.host : "\(target.host):\(target.port)")\r\n"
            + "User-Agent: \(userAgent)\r\nAccept: */*\r\nAccept-Encoding: gzip\r\n\(Self.markHeader)Connection: close\r\n\r\n"
        switch connection.send(Array(request.utf8)) {
        case .sent: break
        case .timedOut: return .success((Exchange(request: description, awaiting: "the server to take the request"), facts))
        case .closed:
            return .success((Exchange(request: description, failure: "the connection was closed while sending the request"), facts))
        }
        switch connection.receive(isHEAD: method == "HEAD") {
        case .response(let response): return .success((Self.decoded(Exchange(request: description, response: response)), facts))
        case .malformed(let message): return .success((Exchange(request: description, failure: message), facts))
        case .timedOut(let received):
            let what =
                received == 0
                ? "the answer to \(method) \(path)"
                : "the rest of the answer to \(method) \(path) (\(received) bytes arrived)"
            return .success((Exchange(request: description, awaiting: what), facts))
        case .closedEarly:
            return .success((Exchange(request: description, failure: "the connection closed before the response was complete"), facts))
        }
    }

    /// The usual cause of an undecodable "compressed" body: a plain body under a Content-Encoding header
    /// (a proxy or a CDN rule adds the header to a file that was never compressed). Nil when the body
    /// does not look plain.
    static func notCompressed(_ body: [UInt8], encoding: String) -> String? {
        // gzip starts with 1F 8B; a zlib stream (deflate) with 78 then a byte making the pair a multiple of 31.
        if body.count >= 2, body[0] == 0x1F && body[1] == 0x8B { return nil }
        guard let first = body.first(where: { $0 != 0x20 && $0 != 0x0A && $0 != 0x0D && $0 != 0x09 }) else {
            return "the response says Content-Encoding: \(encoding) but its body is empty"
        }
        guard first >= 0x20 && first < 0x7F else { return nil }
        return "the response says Content-Encoding: \(encoding), but the body is not \(encoding)-compressed: it starts with "
            + "\"\(Character(Unicode.Scalar(first)))\", plain text (JSON). Apple's fetcher decodes by the header and fails; remove the "
            + "Content-Encoding header for this file, or serve it really compressed (the proxy or CDN rule that adds the "
            + "header to an uncompressed file is the usual cause)"
    }

    /// Undoes `Content-Encoding: gzip` (the size Apple holds to 128 KB is the decoded one).
    static func decoded(_ exchange: Exchange) -> Exchange {
        var result = exchange
        guard let response = exchange.response else { return result }
        let encoding = response.header("Content-Encoding")?.lowercased().trimmingSpacesAndTabs() ?? ""
        switch encoding {
        case "", "identity":
            result.decodedBody = response.body
        case "gzip", "x-gzip", "deflate":
            do {
                result.decodedBody = try Gzip.decompress(response.body, limit: 16 << 20)
            } catch {
                result.decodingError =
                    notCompressed(response.body, encoding: encoding) ?? "the \(encoding) body does not decompress (\(error))"
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
            notYetValid: certificate.notYetValid,
            issuedByDevAuthority: certificate.issuedByDevAuthority
        )
    }
}

enum ServerSettingsAddress {
    /// An IP literal needs no DNS.
    static func isLiteral(_ host: String) -> Bool {
        host.contains(":") || (host.split(separator: ".").count == 4 && host.allSatisfy { $0.isNumber || $0 == "." })
    }
}
