import AASA
import Posix
import Support
import TLS

/// One certificate from order to storage (RFC 8555 §7.4): order, prove control of each name with the
/// first challenge type that applies, finalize with a fresh key's request, download, check, store.
/// Blocking; a worker thread runs it while holding the host's storage lock.
struct OrderProcedure {
    var client: ACMEClient
    let board: ChallengeBoard
    /// Challenge types in preference order, those the listeners and settings allow.
    let challengeTypes: [ACMESettings.Challenge]
    let dnsHook: String?
    let keyType: ACMESettings.KeyType
    /// Beats the host's lock; false once another replica took it over (this one was judged gone).
    let heartbeat: () -> Bool
    let log: (String) -> Void
    /// Seconds the CA gets to validate a challenge and to issue.
    var patienceSeconds = 120

    /// A certificate the CA issued: the chain and key in one PEM, as stored, and its meta.
    struct Issued: Sendable {
        var pem: [UInt8]
        var meta: StoredMeta
    }

    /// Orders a certificate for `host` (a wildcard host is ordered as the wildcard name). Storing it is
    /// the caller's: a storage that fails then must not cost another order.
    ///
    /// `resuming`: an order stored by an attempt that did not finish (a restart, a replica that died, a
    /// timeout) — continued with its own key while the CA still has it, so no second order is placed.
    /// `record` stores a new order before any challenge is answered.
    func run(
        host: String,
        replacing: String?,
        resuming stored: StoredOrder? = nil,
        record: (StoredOrder) -> Void = { _ in }
    ) throws(ACMEError) -> Issued {
        let started: (url: String, order: ACMEOrder, key: SigningKey)
        if let resumed = try resume(stored, host: host) {
            started = resumed
        } else {
            started = try place(host: host, replacing: replacing, record: record)
        }
        let (orderURL, certificateKey) = (started.url, started.key)
        var order = started.order
        for authorizationURL in order.authorizations {
            try authorize(authorizationURL)
        }
        if order.status != "valid" { order = try poll(orderURL, until: ["ready", "valid"], what: "the order for \(host)") }
        let csr: [UInt8]
        do {
            csr = try CertificateRequest.der(names: [host], key: certificateKey)
        } catch {
            throw .local("cannot make the certificate request: \(error)")
        }
        if order.status == "ready" { order = try client.finalize(order, csr: csr) }
        if order.status != "valid" { order = try poll(orderURL, until: ["valid"], what: "issuance for \(host)") }
        guard let certificateURL = order.certificate else { throw .unexpected("the valid order for \(host) names no certificate") }
        let chain = try client.certificate(certificateURL)
        let keyPEM: [UInt8]
        do {
            keyPEM = try certificateKey.pem()
        } catch {
            throw .local("cannot write the certificate key: \(error)")
        }
        let findings = CertificateInspector.check(chainPEM: chain, keyPEM: keyPEM, hosts: [host], now: Int(Posix.unixTime()))
        if let problem = findings.first(where: \.isError) {
            throw .unexpected("the issued certificate for \(host) fails its check: \(problem.message)")
        }
        guard let summary = CertificateInspector.summary(chain) else { throw .unexpected("the issued certificate does not parse") }
        var window: (start: Int, end: Int)?
        var renewalInfoAt: Int?
        if let identifier = summary.renewalIdentifier, let suggested = try? client.renewalWindow(certificateID: identifier) {
            window = (suggested.start, suggested.end)
            renewalInfoAt = RenewalPlan.nextRenewalInfoCheck(retryAfter: suggested.retryAfter, now: Int(Posix.unixTime()))
        }
        let meta = StoredMeta(
            notBefore: summary.notBefore,
            notAfter: summary.notAfter,
            renewAt: RenewalPlan.renewAt(
                notBefore: summary.notBefore,
                notAfter: summary.notAfter,
                window: window,
                random: Double.random(in: 0..<1)
            ),
            renewalID: summary.renewalIdentifier,
            issuer: summary.issuer,
            obtainedAt: Int(Posix.unixTime()),
            renewalInfoAt: renewalInfoAt
        )
        var pem = chain
        if pem.last != UInt8(ascii: "\n") { pem.append(UInt8(ascii: "\n")) }
        return Issued(pem: pem + keyPEM, meta: meta)
    }

    /// The stored order, when the CA still has it in a state that can lead to a certificate.
    private func resume(_ stored: StoredOrder?, host: String) throws(ACMEError) -> (String, ACMEOrder, SigningKey)? {
        guard let stored, let key = SigningKey(pem: stored.keyPEM) else { return nil }
        let order: ACMEOrder
        do {
            order = try client.order(stored.url)
        } catch .unreachable(let message) {
            // The CA is down: a new order would fail the same way, and this one may still be good.
            throw .unreachable(message)
        } catch {
            // Expired, deleted, another account's: ordered anew.
            return nil
        }
        guard ["pending", "ready", "processing", "valid"].contains(order.status) else { return nil }
        log(
            "resuming the order for \(host) placed \(CivilTime(unixSeconds: stored.placedAt).isoSecond)Z (\(order.status)) instead of ordering again"
        )
        return (stored.url, order, key)
    }

    /// A new order, stored with the certificate's key before any challenge is answered.
    private func place(host: String, replacing: String?, record: (StoredOrder) -> Void) throws(ACMEError) -> (String, ACMEOrder, SigningKey)
    {
        let key: SigningKey
        let keyPEM: [UInt8]
        do {
            key = try SigningKey.generate(keyType == .rsa2048 ? .rsa2048 : .ecdsaP256)
            keyPEM = try key.pem()
        } catch {
            throw .local("cannot make the certificate key: \(error)")
        }
        let (url, order): (String, ACMEOrder)
        do {
            (url, order) = try client.newOrder([host], replacing: replacing)
        } catch .refused(let problem, _) where problem.type == "alreadyReplaced" && replacing != nil {
            // RFC 9773 §5: the certificate was already replaced (by another replica, or an order lost in a
            // restart): a plain order, or every later renewal would fail the same way.
            (url, order) = try client.newOrder([host], replacing: nil)
        }
        record(StoredOrder(url: url, keyPEM: keyPEM, placedAt: Int(Posix.unixTime())))
        return (url, order, key)
    }

    /// Throws when another replica took the host's lock over: the order is its now.
    private func stillHolding() throws(ACMEError) {
        guard heartbeat() else {
            throw .superseded("another replica took over the lock (this one was judged gone); the order is left to it")
        }
    }

    private func authorize(_ url: String) throws(ACMEError) {
        let authorization = try client.authorization(url)
        if authorization.status == "valid" { return }
        guard authorization.status == "pending" else {
            throw .refused(
                authorization.failure
                    ?? ACMEProblem(type: "unauthorized", detail: "the authorization is \(authorization.status)", status: 0),
                retryAfter: nil
            )
        }
        let domain = authorization.domain
        // DNS-01 is the one challenge for a wildcard (RFC 8555 §8.4), whatever the list says.
        let usable: [ACMESettings.Challenge] = authorization.wildcard ? (dnsHook != nil ? [.dns01] : []) : challengeTypes
        guard
            let (type, challenge) = usable.lazy.compactMap({ type in
                authorization.challenges.first { $0.type == type.rawValue }.map { (type, $0) }
            }).first
        else {
            let offered = authorization.challenges.map(\.type).joined(separator: ", ")
            let allowed = challengeTypes.map(\.rawValue).joined(separator: ", ")
            let hint =
                authorization.wildcard
                ? " (a wildcard needs dns-01: set acme.dnsHook)" : "; usable here: \(allowed.isEmpty ? "none (no listener fits)" : allowed)"
            throw .local("no usable challenge for \(authorization.wildcard ? "*." : "")\(domain): the CA offers \(offered)\(hint)")
        }
        let keyAuthorization = JWS.keyAuthorization(token: challenge.token, key: client.accountKey)
        let cleanUp = try present(type, domain: domain, token: challenge.token, keyAuthorization: keyAuthorization)
        defer { cleanUp() }
        // Every replica copies the answer from the storage before the CA, told now, comes to ask.
        if type != .dns01 { Posix.sleep(milliseconds: ChallengeBoard.propagationMilliseconds) }
        try client.respond(to: challenge)
        let deadline = Posix.monotonicMilliseconds() + Int64(patienceSeconds) * 1000
        while true {
            try stillHolding()
            let current = try client.authorization(url)
            switch current.status {
            case "valid": return
            case "pending", "processing":
                guard Posix.monotonicMilliseconds() < deadline else {
                    throw .unreachable("the CA did not validate \(domain) within \(patienceSeconds) s")
                }
                pause(until: deadline)
            default:
                let problem =
                    current.failure ?? ACMEProblem(type: "unauthorized", detail: "\(type.rawValue) for \(domain) was refused", status: 0)
                throw .refused(problem, retryAfter: nil)
            }
        }
    }

    /// Puts the answer where the CA will look; returns how to take it away again.
    private func present(
        _ type: ACMESettings.Challenge,
        domain: String,
        token: String,
        keyAuthorization: String
    ) throws(ACMEError) -> () -> Void {
        switch type {
        case .http01:
            guard ChallengeBoard.isToken(token) else { throw .unexpected("the HTTP-01 token is not base64url") }
            do {
                try board.presentHTTP(token: token, keyAuthorization: keyAuthorization)
            } catch {
                throw .local("cannot store the HTTP-01 answer: \(error)")
            }
            return { board.cleanUpHTTP(token: token) }
        case .tlsALPN01:
            let certificate: ServerCertificate
            do {
                certificate = try ServerCertificate.alpnChallenge(domain: domain, keyAuthorization: keyAuthorization)
            } catch {
                throw .local("cannot make the TLS-ALPN-01 certificate: \(error)")
            }
            do {
                try board.presentALPN(domain: domain, keyAuthorization: keyAuthorization, certificate: certificate)
            } catch {
                throw .local("cannot store the TLS-ALPN-01 answer: \(error)")
            }
            return { board.cleanUpALPN(domain: domain) }
        case .dns01:
            guard let dnsHook else { throw .local("dns-01 needs acme.dnsHook") }
            let value = Base64URL.encode(Digest.sha256(Array(keyAuthorization.utf8)))
            let record = "_acme-challenge.\(domain)."
            try runHook(dnsHook, "present", domain: domain, record: record, value: value)
            try stillHolding()
            return { try? runHook(dnsHook, "cleanup", domain: domain, record: record, value: value) }
        }
    }

    /// lego's `exec` convention: `HOOK present|cleanup FQDN VALUE`, the same in the environment.
    private func runHook(_ hook: String, _ action: String, domain: String, record: String, value: String) throws(ACMEError) {
        let result: Posix.CommandResult
        do {
            result = try Posix.runCommand(
                hook,
                arguments: [action, record, value],
                environment: ["ACME_ACTION": action, "ACME_DOMAIN": domain, "ACME_FQDN": record, "ACME_VALUE": value],
                timeoutMilliseconds: 90_000
            )
        } catch {
            throw .local("the DNS hook \(hook) could not run: \(error)")
        }
        guard result.status == 0 else {
            let how = result.timedOut ? "did not finish within 90 s" : "exited with \(result.status.map(String.init) ?? "a signal")"
            let output = result.output.trimmingWhitespace()
            throw .local("the DNS hook \(hook) \(action) for \(domain) \(how)\(output.isEmpty ? "" : ": \(output.prefix(300))")")
        }
    }

    private func poll(_ url: String, until wanted: Set<String>, what: String) throws(ACMEError) -> ACMEOrder {
        let deadline = Posix.monotonicMilliseconds() + Int64(patienceSeconds) * 1000
        while true {
            try stillHolding()
            let order = try client.order(url)
            if wanted.contains(order.status) { return order }
            if order.status == "invalid" {
                throw .refused(
                    order.error ?? ACMEProblem(type: "orderInvalid", detail: "\(what) became invalid", status: 0),
                    retryAfter: nil
                )
            }
            guard Posix.monotonicMilliseconds() < deadline else { throw .unreachable("\(what) did not finish within \(patienceSeconds) s") }
            pause(until: deadline)
        }
    }

    /// Between two polls: the CA's Retry-After when it gave one (never past the deadline), else half a second.
    private func pause(until deadline: Int64) {
        let asked = client.pollAfter.map { $0 * 1000 } ?? 500
        let left = Int(max(0, deadline - Posix.monotonicMilliseconds()))
        Posix.sleep(milliseconds: max(100, min(asked, left)))
    }
}
