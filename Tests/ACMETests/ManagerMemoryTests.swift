import Foundation
import TLS
import TestSupport
import Testing

@testable import AASA
@testable import ACME

/// The manager's memory of certificates, without a CA: what a handshake finds, and how a name not in
/// memory gets there.
@Suite("Certificates in memory")
struct ManagerMemoryTests {
    @Test(
        "A name under a wildcard whose certificate is not in memory is read by the loader and served at the next handshake (the cache holds one)"
    )
    func wildcardMissIsLoaded() throws {
        let storage = InMemoryStorage()
        var settings = ManagerWithoutCA.settings()
        // Never asked: everything is stored, and nothing is due.
        settings.dnsHook = "/bin/false"
        let authority = try DevCertificates.makeAuthority(commonName: "memory test CA")
        let now = Int(Date().timeIntervalSince1970)
        let wildcards = ["*.one.test", "*.two.test"]
        for wildcard in wildcards {
            try ManagerWithoutCA.store(
                wildcard,
                storage,
                settings,
                authority: authority,
                now: now,
                renewAt: now + 86_400 * 30,
                notAfter: now + 86_400 * 60
            )
        }
        let manager = try ManagerWithoutCA.make(settings, storage, cacheCapacity: 1)
        manager.update(configHosts: wildcards, serves: { $0.hasSuffix(".one.test") || $0.hasSuffix(".two.test") })
        try manager.start()
        defer { manager.stop() }
        // One of the two is preloaded (the cache holds one); the other is a miss, and so is the first again
        // once the second pushed it out.
        for name in ["a.one.test", "b.two.test", "c.one.test"] {
            #expect(waitUntil(5) { manager.certificate(forServerName: name) != nil }, "\(name) never loaded")
            #expect(manager.counters.cached == 1)
        }
        #expect(manager.certificate(forServerName: "stranger.test") == nil)
    }
}
