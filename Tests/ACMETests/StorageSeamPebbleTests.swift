import Foundation
import Synchronization
import TestSupport
import Testing

@testable import AASA
@testable import ACME

/// The certificate manager on the in-memory storage against Pebble: nothing it does to storage goes
/// around the interface, and the storage failing is survived the way the issue asks.
@Suite(
    "Certificates on another storage (Pebble)",
    .serialized,
    .enabled(if: Pebble.installed, "pebble is not installed (apt-get install pebble)")
)
struct StorageSeamPebbleTests {
    @Test(
        "A certificate the storage refuses is served from memory and stored later without a second order; a dead replica's lock is taken over"
    )
    func storageFaults() throws {
        let pebble = try Pebble()
        let storage = InMemoryStorage()
        var settings = ACMESettings()
        settings.directory = pebble.directoryURL
        settings.agreeToTerms = true
        settings.challenges = [.dns01]
        settings.dnsHook = try pebble.writeDNSHook()
        settings.retryAfterFailure = 2
        settings.ordersPerDomainPerWeek = 1000
        let lines = Mutex<[String]>([])
        let manager = try CertificateManager(
            settings: settings,
            storage: storage,
            trustFile: pebble.listenerAuthorityPath,
            hmacKeyFile: nil,
            listeners: .init(plain: false, tls: true),
            userAgent: "aasa-server tests",
            log: { _, line in lines.withLock { $0.append(line) } }
        )
        let log = { lines.withLock { $0.joined(separator: "\n") } }
        let layout = CertificateStorage(backend: storage, directoryURL: settings.directory)
        // Issued, but the storage refuses the certificate once.
        storage.fail(.store, keySuffix: "/kept.test/certificate.pem", times: 1)
        // Another replica holds late.test's lock and then dies.
        guard case .acquired = storage.lock(layout.lockName("late.test"), owner: "replica-that-dies", timeoutSeconds: 1) else {
            Issue.record("no lock")
            return
        }
        try manager.start()
        defer { manager.stop() }
        manager.update(configHosts: ["kept.test", "late.test"], serves: { ["kept.test", "late.test"].contains($0) })
        #expect(waitUntil(60) { log().contains("cannot be stored in memory") }, "\(log())")
        #expect(manager.certificate(forServerName: "kept.test") != nil, "served from memory meanwhile")
        #expect(waitUntil(30) { log().contains("stored the certificate for kept.test that was kept in memory (no new order)") }, "\(log())")
        #expect(storage.isSecret(layout.certificateKey("kept.test")) == true)
        #expect(layout.readMeta("kept.test") != nil && layout.readFailure("kept.test") == nil)
        // late.test waits on the other replica's lock: counted, not ordered.
        #expect(waitUntil(10) { manager.counters.waitingOnLock == 1 }, "\(manager.counters)")
        #expect(pebble.orderCount == 1, "one order for kept.test, none for late.test yet: \(pebble.orderCount)")
        // The other replica stops beating; past the stale window the lock is taken over and the order made.
        storage.advance(seconds: FileStorageLock.staleAfter + 1)
        #expect(manager.retryNow("late.test") == .queued("late.test"))
        #expect(waitUntil(60) { log().contains("obtained a certificate for late.test") }, "\(log())")
        #expect(manager.counters.waitingOnLock == 0)
        #expect(pebble.orderCount == 2, "\(pebble.orderCount)")
        #expect(storage.lockHolder(layout.lockName("late.test")) == nil, "released after the order")
        // The account key is a secret of the storage, like certificates.
        #expect(storage.keys.contains { $0.hasSuffix("/account.pem") && storage.isSecret($0) == true }, "\(storage.keys)")
    }
}
