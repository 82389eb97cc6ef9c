import AASA
import HTTP1
import HTTPClient
import Posix
import Support
import Synchronization
import TLS

/// One order, from the decision to the stored certificate, and what a failure costs.
extension CertificateManager {
    func obtain(_ host: String) {
        let now = Int(Posix.unixTime())
        let (decision, isKnown) = state.withLock { (IssuanceDecision.decide(normalized: host, $0.inputs), $0[host].schedule != nil) }
        let isConfigHost: Bool
        switch decision {
        case .configHost: isConfigHost = true
        case .onDemand: isConfigHost = false
        case .coveredByWildcard, .refused:
            // The config changed since this was queued (a host removed, a wildcard certificate asked for
            // instead): nothing is ordered, renewed or written for it.
            let wasKnown = state.withLock { state -> Bool in
                let wasKnown = state[host].schedule != nil
                state[host].setback.notBefore = 0
                state[host].setback.failures = 0
                state[host].schedule = nil
                return wasKnown
            }
            // Outside the lock: a handshake on an event loop may be waiting for it.
            if wasKnown { log(.info, "not renewing the certificate for \(host): \(Self.why(decision))") }
            return
        }
        // A certificate the CA already issued is stored, not ordered again.
        if let issued = state.withLock({ $0[host].setback.unstored }) {
            keep(host, issued, obtainedHere: false)
            return
        }
        // What is renewed: its expiry for the log, its renewal-information ID for the CA.
        let previous = isKnown ? storage.readMeta(host) : nil
        // On demand, the ask endpoint decides every order, renewals included: a customer who left is not renewed.
        if !isConfigHost, let ask = settings.onDemand?.ask {
            if let refusal = askAllows(host, ask) {
                fail(host, ACMEError.local(refusal), configHost: false)
                return
            }
        }
        let lock: any StorageLockHandle
        switch storage.lock(host, owner: owner, timeoutSeconds: 300) {
        case .acquired(let acquired): lock = acquired
        case .busy:
            state.withLock { state in
                state[host].setback.notBefore = now + 30
                state[host].setback.waitingOnLock = true
            }
            return
        case .failed(let message):
            fail(host, .local("cannot lock \(host) in storage: \(message)"), configHost: isConfigHost)
            return
        }
        defer { lock.release() }
        state.withLock { $0[host].setback.waitingOnLock = false }
        // Another replica may have obtained it while this one waited for the lock.
        if let meta = storage.readMeta(host), meta.renewAt > now, case .success(let bytes) = storage.readCertificate(host),
            (try? ServerCertificate(chainPEM: bytes, keyPEM: bytes)) != nil
        {
            stored(host, meta, obtainedHere: false)
            return
        }
        do {
            let client = try accountClient()
            state.withLock { $0.counters.ordersStarted += 1 }
            if let previous {
                log(.info, "renewing the certificate for \(host) (expires \(CivilTime(unixSeconds: previous.notAfter).isoSecond)Z)")
            } else {
                log(.info, "ordered a certificate for \(host)")
            }
            let procedure = OrderProcedure(
                client: client,
                board: board,
                challengeTypes: challengeTypes,
                dnsHook: settings.dnsHook,
                keyType: settings.keyType,
                heartbeat: { lock.heartbeat() },
                log: { [log] in log(.info, $0) }
            )
            let issued: OrderProcedure.Issued
            let record = { [storage, log] (order: StoredOrder) in
                do {
                    try storage.storeOrder(host, order)
                } catch {
                    log(.warning, "cannot store the order for \(host) (\(error)); a restart before it finishes orders again")
                }
            }
            do {
                issued = try procedure.run(host: host, replacing: previous?.renewalID, resuming: storage.readOrder(host), record: record)
            } catch .refused(let problem, _) where problem.type == "accountDoesNotExist" {
                // The CA no longer knows the stored account (a reset test CA, a deactivated account):
                // register the key again and order once more.
                log(.warning, "the CA does not know the stored ACME account; registering again")
                forgetAccount()
                var again = procedure
                again.client = try accountClient()
                issued = try again.run(host: host, replacing: previous?.renewalID, record: record)
            }
            state.withLock { $0.counters.ordersSucceeded += 1 }
            keep(host, issued, obtainedHere: true)
        } catch {
            fail(host, error, configHost: isConfigHost)
        }
    }

    /// Stores what the CA issued; when the storage fails, serves it from memory and tries storing again
    /// after a short backoff (the next attempt stores it, it does not order).
    func keep(_ host: String, _ issued: OrderProcedure.Issued, obtainedHere: Bool) {
        do {
            try storage.storeCertificate(host, chainAndKey: issued.pem, meta: issued.meta)
        } catch {
            let certificate = try? ServerCertificate(chainPEM: issued.pem, keyPEM: issued.pem)
            let now = Posix.monotonicMilliseconds()
            state.withLock { state in
                state[host].setback.unstored = issued
                state[host].schedule = Schedule(issued.meta)
                if let certificate { state[host].cached = Cached(certificate: certificate, stamp: nil, lastUse: now) }
            }
            fail(
                host,
                .unstored("the certificate was issued but cannot be stored in \(storage.location) (\(error)); serving it from memory"),
                configHost: true
            )
            return
        }
        state.withLock { $0[host].setback.unstored = nil }
        if !obtainedHere { log(.info, "stored the certificate for \(host) that was kept in memory (no new order)") }
        stored(host, issued.meta, obtainedHere: obtainedHere)
    }

    func stored(_ host: String, _ meta: StoredMeta, obtainedHere: Bool) {
        state.withLock { state in
            state[host].schedule = Schedule(meta)
            // Whatever went wrong before is over (an unstored certificate was stored just before this).
            state[host].setback = Setback()
            state[host].cached = nil
            state[host].nothingStoredUntil = 0
        }
        // Into memory here, on the worker: the next handshake serves it without reading the storage.
        _ = load(host, now: Posix.monotonicMilliseconds())
        if obtainedHere {
            log(
                .info,
                "obtained a certificate for \(host) from \(meta.issuer.isEmpty ? "the CA" : meta.issuer), valid until "
                    + "\(CivilTime(unixSeconds: meta.notAfter).isoSecond)Z; renewing around \(CivilTime(unixSeconds: meta.renewAt).isoSecond)Z"
            )
        }
    }

    func fail(_ host: String, _ error: ACMEError, configHost: Bool) {
        if case .superseded(let message) = error {
            // The replica that took over finishes the order and records how it went.
            log(.info, "stopped working on \(host): \(message)")
            return
        }
        let now = Int(Posix.unixTime())
        let base = configHost || settings.onDemand == nil ? settings.retryAfterFailure : settings.onDemand!.retryAfterFailure
        let delay = state.withLock { state -> Int in
            var setback = state[host].setback
            setback.failures += 1
            state.counters.ordersFailed += 1
            let delay =
                error.isTransient
                ? RenewalPlan.transientBackoff(failures: setback.failures, base: base)
                : RenewalPlan.backoff(failures: setback.failures, base: base, retryAfter: error.retryAfter)
            setback.notBefore = now + delay
            setback.lastError = error.description
            state[host].setback = setback
            return delay
        }
        storage.recordFailure(host, StoredFailure(time: now, message: error.description, nextAttempt: now + delay))
        var message = "could not obtain a certificate for \(host): \(error)"
        if error.retryAfter == nil { message += "; next attempt in \(Durations.words(delay))" }
        log(.warning, message)
    }

    /// Nil when the ask URL allows `host`; else why not.
    func askAllows(_ host: String, _ ask: String) -> String? {
        let separator = ask.contains("?") ? "&" : "?"
        guard let url = ClientURL("\(ask)\(separator)domain=\(host)") else { return "the ask URL \(ask) is not a URL" }
        switch http.send("GET", url, timeoutMilliseconds: 10_000) {
        case .success(let response) where response.status == 200: return nil
        case .success(let response): return "the ask URL refused \(host) (\(response.status)); no order placed"
        case .failure(let error): return "the ask URL could not be asked about \(host) (\(error.message)); no order placed"
        }
    }

    static func why(_ decision: IssuanceDecision) -> String {
        switch decision {
        case .refused(let refusal): return refusal.description
        case .coveredByWildcard(let wildcard): return "the certificate for \(wildcard) covers it"
        case .configHost, .onDemand: return "it is allowed"
        }
    }
}
