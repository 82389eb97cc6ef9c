import Foundation
import Glibc
import Synchronization
import TestSupport
import Testing

@testable import AASA
@testable import ACME

/// What a manager logged, for a test to read while it runs.
final class LogLines: Sendable {
    private let lines = Mutex<[String]>([])
    func append(_ line: String) { lines.withLock { $0.append(line) } }
    var text: String { lines.withLock { $0.joined(separator: "\n") } }
}

/// The certificate manager on the in-memory storage against Pebble: nothing it does to storage goes
/// around the interface, and the storage failing is survived the way the issue asks.
@Suite(
    "Certificates on another storage (Pebble)",
    .serialized,
    .enabled(if: Pebble.installed, "pebble is not installed (apt-get install pebble)")
)
struct StorageSeamPebbleTests {
    /// A manager on `storage` ordering by DNS-01 from `pebble` through `hook`, logging into `lines`.
    static func manager(_ pebble: Pebble, _ storage: any Storage, hook: String, lines: LogLines) throws -> CertificateManager {
        var settings = ACMESettings()
        settings.directory = pebble.directoryURL
        settings.agreeToTerms = true
        settings.challenges = [.dns01]
        settings.dnsHook = hook
        settings.retryAfterFailure = 2
        settings.ordersPerDomainPerWeek = 1000
        return try CertificateManager(
            settings: settings,
            storage: storage,
            trustFile: pebble.listenerAuthorityPath,
            hmacKeyFile: nil,
            listeners: .init(plain: false, tls: true),
            userAgent: "aasa-server tests",
            log: { _, line in lines.append(line) }
        )
    }

    @Test(
        "A certificate the storage refuses is served from memory and stored later without a second order; a dead replica's lock is taken over"
    )
    func storageFaults() throws {
        let pebble = try Pebble()
        let storage = InMemoryStorage()
        let lines = LogLines()
        let manager = try Self.manager(pebble, storage, hook: try pebble.writeDNSHook(), lines: lines)
        let log = { lines.text }
        let layout = CertificateStorage(backend: storage, directoryURL: pebble.directoryURL)
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
        storage.advance(seconds: FileStorage.defaultLockStaleAfter + 1)
        #expect(manager.retryNow("late.test") == .queued("late.test"))
        #expect(waitUntil(60) { log().contains("obtained a certificate for late.test") }, "\(log())")
        #expect(manager.counters.waitingOnLock == 0)
        #expect(pebble.orderCount == 2, "\(pebble.orderCount)")
        #expect(storage.lockHolder(layout.lockName("late.test")) == nil, "released after the order")
        // The account key is a secret of the storage, like certificates.
        #expect(storage.keys.contains { $0.hasSuffix("/account.pem") && storage.isSecret($0) == true }, "\(storage.keys)")
    }

    @Test(
        "A replica that dies mid-order: the next holder of the lock resumes the same order (one order at the CA), the dead one stands down"
    )
    func resumedOrder() throws {
        let pebble = try Pebble()
        let storage = InMemoryStorage()
        // The first `present` hangs for a while, as a replica that died in its DNS hook would.
        let realHook = try pebble.writeDNSHook()
        let hook = pebble.directory + "/slow-first-hook.sh"
        let marker = pebble.directory + "/hung-once"
        try Data(
            """
            #!/bin/sh
            if [ "$1" = present ] && [ ! -e \(marker) ]; then : > \(marker); sleep 8; fi
            exec \(realHook) "$@"
            """.utf8
        ).write(to: URL(fileURLWithPath: hook))
        chmod(hook, 0o755)
        let linesA = LogLines()
        let linesB = LogLines()
        let logA = { linesA.text }
        let logB = { linesB.text }
        let layout = CertificateStorage(backend: storage, directoryURL: pebble.directoryURL)
        let dying = try Self.manager(pebble, storage, hook: hook, lines: linesA)
        try dying.start()
        defer { dying.stop() }
        dying.update(configHosts: ["resume.test"], serves: { $0 == "resume.test" })
        #expect(waitUntil(30) { layout.readOrder("resume.test") != nil }, "the order is stored before its challenge: \(logA())")
        #expect(pebble.orderCount == 1)
        // Its heartbeats stop; past the stale window another replica holds the lock.
        storage.advance(seconds: FileStorage.defaultLockStaleAfter + 1)
        let taking = try Self.manager(pebble, storage, hook: hook, lines: linesB)
        try taking.start()
        defer { taking.stop() }
        taking.update(configHosts: ["resume.test"], serves: { $0 == "resume.test" })
        #expect(waitUntil(60) { logB().contains("obtained a certificate for resume.test") }, "\(logB())")
        #expect(logB().contains("resuming the order for resume.test"), "\(logB())")
        #expect(pebble.orderCount == 1, "one order at the CA: \(pebble.orderCount)")
        #expect(layout.readOrder("resume.test") == nil, "a finished order is forgotten")
        // The first replica comes back from its hook, finds the lock is not its own, and stands down.
        #expect(waitUntil(20) { logA().contains("stopped working on resume.test: another replica took over the lock") }, "\(logA())")
        #expect(layout.readFailure("resume.test") == nil, "standing down is not a failure: \(logA())")
        #expect(!logA().contains("obtained a certificate for resume.test"))
        #expect(pebble.orderCount == 1)
    }

    @Test(
        "Two replicas on one PostgreSQL storage: one orders, the other serves the stored certificate without an order of its own; the account is shared"
    )
    func postgresReplicas() throws {
        let pebble = try Pebble()
        let first = try freshPostgresStorage()
        let second = PostgresStorage(login: first.login)
        let hook = try pebble.writeDNSHook()
        let (linesA, linesB) = (LogLines(), LogLines())
        let replicaA = try Self.manager(pebble, first, hook: hook, lines: linesA)
        try replicaA.start()
        defer { replicaA.stop() }
        replicaA.update(configHosts: ["pg.test"], serves: { $0 == "pg.test" })
        #expect(waitUntil(60) { linesA.text.contains("obtained a certificate for pg.test") }, "\(linesA.text)")
        let layout = CertificateStorage(backend: second, directoryURL: pebble.directoryURL)
        #expect(layout.storedHosts() == ["pg.test"] && layout.readMeta("pg.test") != nil)
        #expect(second.list("accounts").count == 1, "\(second.list("accounts"))")

        let replicaB = try Self.manager(pebble, second, hook: hook, lines: linesB)
        try replicaB.start()
        defer { replicaB.stop() }
        replicaB.update(configHosts: ["pg.test"], serves: { $0 == "pg.test" })
        #expect(waitUntil(30) { replicaB.certificate(forServerName: "pg.test") != nil }, "\(linesB.text)")
        #expect(pebble.orderCount == 1, "the second replica ordered again: \(pebble.orderCount) orders")
        #expect(!linesB.text.contains("obtained a certificate"), "\(linesB.text)")
    }
}
