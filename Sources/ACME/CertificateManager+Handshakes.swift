import AASA
import HTTP1
import HTTPClient
import Posix
import Support
import Synchronization
public import TLS

/// What a handshake asks of the manager: from memory only, never the storage or the network; the loader
/// thread reads what is missing, and the loops hear when it is ready.
extension CertificateManager {
    /// Calls `listener` (on a manager thread) whenever a certificate a handshake may be waiting for is
    /// ready in memory, or found not to come.
    public func whenCertificatesChange(_ listener: @escaping @Sendable () -> Void) { listeners.withLock { $0.append(listener) } }

    func certificatesChanged() {
        for listener in listeners.withLock({ $0 }) { listener() }
    }

    /// Whether a handshake for `raw` can go on now, should wait, or will find nothing: from memory only.
    /// A name not in memory is queued for the loader (read from the storage off the loops); an allowed
    /// on-demand name with nothing stored is queued for an order.
    public func lookup(forServerName raw: String) -> CertificateLookup {
        guard case .success(let name) = CertificateName.normalize(raw) else { return .none }
        let now = Posix.monotonicMilliseconds()
        enum Step {
            case answer(CertificateLookup)
            case load(String)
            case order(String)
        }
        let step = state.withLock { state -> Step in
            let key: String
            let decision = IssuanceDecision.decide(normalized: name, state.inputs)
            switch decision {
            case .refused: return .answer(.none)
            case .coveredByWildcard(let wildcard): key = wildcard
            case .configHost, .onDemand: key = name
            }
            let record = state[key]
            if record.cached != nil { return .answer(.ready) }
            if record.loading { return .answer(.pending) }
            if record.nothingStoredUntil > now {
                // An order about to start or running (the scheduler's for a config host, or on demand).
                if record.busy { return .answer(state.orderComing(key) ? .pending : .none) }
                return decision == .onDemand && settings.onDemand != nil ? .order(key) : .answer(.none)
            }
            guard state.loads.count < Self.loadCapacity else { return .answer(.none) }
            state[key].loading = true
            state.loads.append(key)
            return .load(key)
        }
        switch step {
        case .answer(let answer): return answer
        case .load:
            loaderWake.signal()
            return .pending
        case .order(let key):
            enqueue(key)
            return state.withLock { $0.orderComing(key) } ? .pending : .none
        }
    }

    /// The loader: reads what handshakes asked for from the storage, into memory, and queues on-demand
    /// orders for allowed names with nothing stored.
    func loadLoop() {
        while !state.withLock({ $0.stopping }) {
            let batch = state.withLock { state -> [String] in
                let batch = state.loads
                state.loads = []
                return batch
            }
            if batch.isEmpty {
                _ = Posix.wait(loaderWake.fd, for: .readable, timeoutMilliseconds: 1000)
                _ = loaderWake.drain()
                continue
            }
            for key in batch {
                let now = Posix.monotonicMilliseconds()
                let found = load(key, now: now) != nil
                let decision = state.withLock { state -> IssuanceDecision in
                    state[key].loading = false
                    if !found { Self.remember(nothingStored: key, until: now + 5_000, in: &state) }
                    return IssuanceDecision.decide(normalized: key, state.inputs)
                }
                // Config hosts (and their wildcards) are ordered by the scheduler, not by handshakes.
                if !found, decision == .onDemand { requestOnDemand(key) }
            }
            certificatesChanged()
        }
    }

    /// A handshake's certificate, from memory. A name the decision refuses gets nothing and touches
    /// nothing; one not in memory is queued for the loader (this handshake goes without, unless it waits
    /// through `lookup` first).
    public func certificate(forServerName raw: String) -> ServerCertificate? {
        guard case .success(let name) = CertificateName.normalize(raw) else { return nil }
        let now = Posix.monotonicMilliseconds()
        enum Step {
            case hit(ServerCertificate)
            case skip
            case look
        }
        let (decision, key, step): (IssuanceDecision, String, Step) = state.withLock { state in
            let decision = IssuanceDecision.decide(normalized: name, state.inputs)
            let key: String
            switch decision {
            case .refused: return (decision, name, .skip)
            case .coveredByWildcard(let wildcard): key = wildcard
            case .configHost, .onDemand: key = name
            }
            // Another replica may renew a cached certificate: the scheduler looks at the files every 30 s,
            // off the loops.
            guard let record = state.records[key] else { return (decision, key, .look) }
            if let cached = record.cached {
                cached.lastUse = now
                return (decision, key, .hit(cached.certificate))
            }
            if record.nothingStoredUntil > now { return (decision, key, .skip) }
            return (decision, key, .look)
        }
        if case .refused = decision { return nil }
        switch step {
        case .hit(let certificate): return certificate
        case .skip:
            if decision == .onDemand { requestOnDemand(key) }
            return nil
        case .look:
            // The name as it arrived: `key` may be a wildcard's, which is not a server name.
            _ = lookup(forServerName: name)
            return nil
        }
    }
}
