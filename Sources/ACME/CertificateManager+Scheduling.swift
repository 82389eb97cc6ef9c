import AASA
import HTTP1
import HTTPClient
import Posix
import Support
import Synchronization
import TLS

/// The queues and the scheduler: what is ordered when, renewals, renewal information, and the cleanup of
/// hosts the config no longer serves.
extension CertificateManager {
    func requestOnDemand(_ name: String) {
        guard settings.onDemand != nil else { return }
        enqueue(name)
    }

    /// Queues an order for `host` unless one is queued or running, or it is backing off after a failure:
    /// a renewal when a certificate is stored for it, else a first order under the rate limits.
    func enqueue(_ host: String) {
        let now = Int(Posix.unixTime())
        let (added, report) = state.withLock { state -> (Bool, Int?) in
            let record = state[host]
            guard !state.stopping, !record.busy else { return (false, nil) }
            if record.setback.notBefore > now { return (false, nil) }
            switch state.queue.enqueue(host, record.schedule != nil ? .renewal : .first) {
            case .queued:
                state[host].work = .queued
                return (true, nil)
            case .alreadyQueued:
                return (false, nil)
            case .dropped:
                // Once a minute, with the count: a flood of names must not flood the log too.
                guard now - state.lastDropReport >= 60 else { return (false, nil) }
                state.lastDropReport = now
                return (false, state.queue.dropped)
            }
        }
        if added { workerBell.ring() }
        if let report {
            log(
                .warning,
                "the queue of first orders is full (10,000 names): dropped \(host) (\(report) dropped since start); they are ordered at their next handshake"
            )
        }
    }

    func workLoop() {
        while true {
            // Taken before looking at the queue: an order queued after this look ends the wait below at once.
            let seen = workerBell.generation
            enum Step {
                case stop
                case order(String, OrderQueue.Kind)
                case wait(Int)
            }
            let step = state.withLock { state -> Step in
                if state.stopping { return .stop }
                let firstOrders = state.runningFirstOrders < max(1, settings.maxConcurrentOrders - 1)
                switch state.queue.next(now: Int(Posix.unixTime()), firstOrders: firstOrders) {
                case .order(let host, let kind):
                    state[host].work = .running
                    if kind == .first { state.runningFirstOrders += 1 }
                    return .order(host, kind)
                case .waitUntil(let time): return .wait(max(1, min(60, time - Int(Posix.unixTime()))) * 1000)
                case .empty: return .wait(1000)
                }
            }
            switch step {
            case .order(let host, let kind):
                obtain(host)
                let again = state.withLock { state -> Bool in
                    state[host].work = .idle
                    if kind == .first { state.runningFirstOrders -= 1 }
                    guard state[host].retryRequested else { return false }
                    state[host].retryRequested = false
                    // The retry asked for during the order: its backoff is forgotten too.
                    state[host].setback.notBefore = 0
                    return true
                }
                // Handshakes waiting for it step again: it is in memory now, or it will not come.
                certificatesChanged()
                if again { enqueue(host) }
            case .stop: return
            case .wait(let milliseconds): workerBell.wait(after: seen, timeoutMilliseconds: milliseconds)
            }
        }
    }

    /// Finds new config hosts in storage, and queues what is due: renewals and retries after failures.
    func scheduleLoop() {
        let adopted = storage.adoptLegacyCertificates()
        if adopted > 0 {
            log(
                .info,
                "moved \(adopted) stored certificate\(adopted == 1 ? "" : "s") of an earlier version under \(storage.backend.describe(storage.certificatesFolder))"
            )
        }
        var known: [(String, Schedule)] = []
        for host in storage.storedHosts() { if let meta = storage.readMeta(host) { known.append((host, Schedule(meta))) } }
        state.withLock { state in for (host, schedule) in known { state[host].schedule = schedule } }
        // Reading every meta file left freed buffers in this thread's malloc arena: hand them back.
        Posix.releaseFreeMemory()
        var lastSweep = 0
        var lastCleanup = 0
        var lastRefresh = 0
        var preloaded = false
        while !state.withLock({ $0.stopping }) {
            _ = Posix.wait(schedulerWake.fd, for: .readable, timeoutMilliseconds: 1000)
            _ = schedulerWake.drain()
            let now = Int(Posix.unixTime())
            let unchecked = state.withLock { state -> [String] in
                let batch = Array(state.unchecked.prefix(10_000))
                state.unchecked.removeFirst(batch.count)
                return batch
            }
            for host in unchecked {
                if let meta = storage.readMeta(host), storage.hasCertificate(host) {
                    state.withLock { $0[host].schedule = Schedule(meta) }
                    if meta.renewAt <= now { enqueue(host) }
                } else {
                    if let failure = storage.readFailure(host), failure.nextAttempt > now {
                        state.withLock { $0[host].setback.notBefore = failure.nextAttempt }
                    }
                    enqueue(host)
                }
            }
            guard now - lastSweep >= 5 else { continue }
            lastSweep = now
            if !preloaded, state.withLock({ $0.configured }) {
                preloaded = true
                preload()
            }
            if now - lastRefresh >= 30 {
                lastRefresh = now
                refreshCache()
            }
            if now - lastCleanup >= 86_400, state.withLock({ $0.configured }) {
                lastCleanup = now
                removeUnserved(now: now)
            }
            let (due, askCA) = state.withLock { state -> ([String], [String]) in
                var due: [String] = []
                // A few per sweep: at 100,000 certificates and the usual six hours, about 5 a second.
                var askCA: [String] = []
                for (host, record) in state.records where !record.busy {
                    let notBefore = record.setback.notBefore
                    if let schedule = record.schedule {
                        if schedule.renewAt <= now || (notBefore != 0 && notBefore <= now) {
                            due.append(host)
                        } else if schedule.renewalInfoAt <= now && askCA.count < 20 {
                            askCA.append(host)
                        }
                    } else if notBefore != 0 && notBefore <= now && state.configHosts.contains(host) {
                        due.append(host)
                    }
                }
                return (due, askCA)
            }
            for host in due { enqueue(host) }
            for host in askCA { refreshRenewalInfo(host, now: now) }
        }
    }

    /// RFC 9773 §4.3: the CA's renewal window of a stored certificate, asked again when its Retry-After
    /// passed (not only at issuance): a CA that moves the window earlier (a revocation coming, a mass
    /// renewal) gets the certificate renewed inside it. The new time is stored under the host's lock, only
    /// while the stored certificate is still the one asked about.
    func refreshRenewalInfo(_ host: String, now: Int) {
        guard let meta = storage.readMeta(host), let renewalID = meta.renewalID else {
            state.withLock { $0[host].schedule?.renewalInfoAt = Int.max }
            return
        }
        let window: RenewalWindow?
        do {
            window = try accountClient().renewalWindow(certificateID: renewalID)
        } catch {
            // Asked again in ten minutes; the planned renewal stands meanwhile.
            state.withLock { $0[host].schedule?.renewalInfoAt = now + 600 }
            return
        }
        guard let window else {
            state.withLock { $0[host].schedule?.renewalInfoAt = Int.max }
            return
        }
        var updated = meta
        updated.renewAt = RenewalPlan.renewAt(keeping: meta.renewAt, window: (window.start, window.end), random: Double.random(in: 0..<1))
        updated.renewalInfoAt = RenewalPlan.nextRenewalInfoCheck(retryAfter: window.retryAfter, now: now)
        if case .acquired(let lock) = storage.lock(host, owner: owner, timeoutSeconds: 1) {
            if storage.readMeta(host)?.renewalID == renewalID { try? storage.storeMeta(host, updated) }
            lock.release()
        }
        state.withLock { $0[host].schedule = Schedule(updated) }
        if updated.renewAt != meta.renewAt {
            log(
                .info,
                "the CA's renewal information moved the renewal of \(host) to \(CivilTime(unixSeconds: updated.renewAt).isoSecond)Z "
                    + "(window \(CivilTime(unixSeconds: window.start).isoSecond)Z to \(CivilTime(unixSeconds: window.end).isoSecond)Z)"
            )
        }
        if updated.renewAt <= now { enqueue(host) }
    }

    /// How long a certificate of a host the config no longer serves stays in storage after it expires:
    /// long enough to undo a config mistake without a new order while it is valid, and to look at it after.
    public static let removalGrace = 30 * 86_400

    /// Removes the stored certificates of hosts the config does not serve any more, once they expired
    /// `removalGrace` ago (daily; under each host's lock, so no replica is renewing it meanwhile).
    func removeUnserved(now: Int) {
        let inputs = state.withLock { $0.inputs }
        for host in storage.storedHosts() {
            // A folder with only a failure (never obtained) ends at that failure.
            guard case .refused = IssuanceDecision.decide(normalized: host, inputs),
                let ended = storage.readMeta(host)?.notAfter ?? storage.readFailure(host)?.time,
                ended + Self.removalGrace < now
            else { continue }
            guard case .acquired(let lock) = storage.lock(host, owner: owner, timeoutSeconds: 1) else { continue }
            storage.remove(host)
            lock.release()
            state.withLock { state in
                state[host].schedule = nil
                state[host].cached = nil
            }
            log(
                .info,
                "removed what was stored for \(host): the config no longer serves it, and it ended "
                    + "\(CivilTime(unixSeconds: ended).isoDay), more than \(Self.removalGrace / 86_400) days ago"
            )
        }
    }
}
