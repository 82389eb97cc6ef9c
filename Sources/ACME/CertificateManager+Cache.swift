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
            state.cache[name] = Cached(certificate: certificate, stamp: stamp, checkedAt: now, lastUse: now)
            state.nothingStored[name] = nil
            evict(&state)
        }
        return certificate
    }

    /// The config's hosts (and wildcards) with a stored certificate, loaded before their first handshake,
    /// up to the cache's capacity: their handshakes never wait on the storage.
    func preload() {
        let hosts = state.withLock { state in state.configHosts.filter { state.known[$0] != nil && state.cache[$0] == nil } }
        let now = Posix.monotonicMilliseconds()
        for host in hosts.prefix(cacheCapacity) { _ = load(host, now: now) }
    }

    /// Every cached certificate's file, looked at: one another replica renewed is loaded here, off the
    /// loops (a file that went away keeps the certificate in memory).
    func refreshCache() {
        let entries = state.withLock { state in state.cache.map { ($0.key, $0.value.stamp) } }
        let now = Posix.monotonicMilliseconds()
        for (host, stamp) in entries {
            let current = storage.certificateStamp(host)
            if current != nil && current != stamp { _ = load(host, now: now) }
        }
    }

    /// Keeps the cache within its capacity: of a few entries drawn at random, the least recently used goes.
    func evict(_ state: inout State) {
        while state.cache.count > cacheCapacity {
            var victim: (String, Int64)?
            for _ in 0..<8 {
                guard let entry = state.cache.randomElement() else { break }
                if victim == nil || entry.value.lastUse < victim!.1 { victim = (entry.key, entry.value.lastUse) }
            }
            guard let victim else { break }
            state.cache[victim.0] = nil
        }
    }

    static func remember(nothingStored name: String, until: Int64, in state: inout State) {
        if state.nothingStored.count > 100_000 { state.nothingStored = [:] }
        state.nothingStored[name] = until
    }

    func damaged(_ host: String, because reason: String) {
        let first = state.withLock { state -> Bool in
            let first = state.lastError[host]?.hasPrefix("damaged") != true
            state.lastError[host] = "damaged certificate in storage: \(reason)"
            state.cache[host] = nil
            return first
        }
        if first {
            log(.warning, "the stored certificate for \(host) is damaged (\(reason)); not serving it, ordering a new one")
        }
        // Under the same backoff as any failure: a damaged file is not a reason to ask the CA every few seconds.
        enqueue(host)
    }
}
