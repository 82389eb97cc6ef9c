import AASA
import HTTP1
import HTTPClient
import Posix
import Support
import Synchronization
import TLS

/// Certificates ready in memory: loaded off the loops, checked against the storage every 30 s, bounded.
extension CertificateManager {
    /// Reads, checks and caches the stored certificate of `name`; nil when there is none or it is damaged
    /// (a damaged one is reported and ordered again, never served).
    func load(_ name: String, now: Int64) -> ServerCertificate? {
        let stamp = storage.certificateStamp(name)
        guard stamp != nil else { return nil }
        let bytes: [UInt8]
        switch storage.readCertificate(name) {
        case .success(let read): bytes = read
        case .failure: return nil
        }
        let certificate: ServerCertificate
        do {
            certificate = try ServerCertificate(chainPEM: bytes, keyPEM: bytes)
        } catch {
            damaged(name, because: error.description)
            return nil
        }
        state.withLock { state in
            state[name].cached = Cached(certificate: certificate, stamp: stamp, lastUse: now)
            state[name].nothingStoredUntil = 0
            evict(&state)
        }
        return certificate
    }

    /// The config's hosts (and wildcards) with a stored certificate, loaded before their first handshake,
    /// up to the cache's capacity: their handshakes never wait on the storage.
    func preload() {
        let hosts = state.withLock { state in
            state.configHosts.filter { host in state.records[host].map { $0.schedule != nil && $0.cached == nil } ?? false }
        }
        let now = Posix.monotonicMilliseconds()
        for host in hosts.prefix(cacheCapacity) { _ = load(host, now: now) }
    }

    /// Every cached certificate's file, looked at: one another replica renewed is loaded here, off the
    /// loops (a file that went away keeps the certificate in memory).
    func refreshCache() {
        let entries = state.withLock { state in state.inMemory.map { ($0, state[$0].cached?.stamp) } }
        let now = Posix.monotonicMilliseconds()
        for (host, stamp) in entries {
            let current = storage.certificateStamp(host)
            if current != nil && current != stamp { _ = load(host, now: now) }
        }
    }

    /// Keeps the cache within its capacity: of a few entries drawn at random, the least recently used goes.
    func evict(_ state: inout State) {
        while state.inMemory.count > cacheCapacity {
            var victim: (String, Int64)?
            for _ in 0..<8 {
                guard let host = state.inMemory.randomElement(), let lastUse = state[host].cached?.lastUse else { break }
                if victim == nil || lastUse < victim!.1 { victim = (host, lastUse) }
            }
            guard let victim else { break }
            state[victim.0].cached = nil
        }
    }

    /// Bounded: a flood of made-up names allowed by `ask` cannot grow the records without limit.
    static func remember(nothingStored name: String, until: Int64, in state: inout State) {
        if state.nothingStoredCount > 100_000 { state.forgetNothingStored() }
        state[name].nothingStoredUntil = until
    }

    func damaged(_ host: String, because reason: String) {
        let first = state.withLock { state -> Bool in
            let first = state[host].setback.lastError?.hasPrefix("damaged") != true
            state[host].setback.lastError = "damaged certificate in storage: \(reason)"
            state[host].cached = nil
            return first
        }
        if first {
            log(.warning, "the stored certificate for \(host) is damaged (\(reason)); not serving it, ordering a new one")
        }
        // Under the same backoff as any failure: a damaged file is not a reason to ask the CA every few seconds.
        enqueue(host)
    }
}
