import Foundation
import Synchronization
import TLS
import TestSupport
import Testing

@testable import AASA
@testable import ACME

/// The order workers and the scheduler, without a CA: every order fails as it starts, and the log says when.
@Suite("Order workers")
struct OrderWorkerTests {
    @Test(
        "A renewal that falls due while every worker waits out the first orders' rate limit starts within seconds, not at the end of the workers' wait"
    )
    func renewalWakesRateLimitedWorkers() throws {
        let storage = InMemoryStorage()
        var settings = ManagerWithoutCA.settings()
        settings.onDemand = ACMESettings.OnDemand()
        // One first order an hour: after it, the workers wait for the next token (a minute at a time).
        settings.ordersPerHour = 1
        let now = Int(Date().timeIntervalSince1970)
        let renewAt = now + 7
        try ManagerWithoutCA.store(
            "renewed.test",
            storage,
            settings,
            authority: try DevCertificates.makeAuthority(),
            now: now,
            renewAt: renewAt
        )
        let lines = Mutex<[String]>([])
        let manager = try ManagerWithoutCA.make(settings, storage) { _, line in lines.withLock { $0.append(line) } }
        manager.update(configHosts: ["renewed.test"], serves: { $0.hasSuffix(".flood.test") || $0 == "renewed.test" })
        try manager.start()
        func logged(_ text: String) -> Bool { lines.withLock { $0.contains { $0.contains(text) } } }
        for index in 0..<20 { manager.requestOnDemand("n\(index).flood.test") }
        // The one allowed first order fails; every other waits for the rate limit, and so do the workers.
        #expect(waitUntil(5) { logged("could not obtain a certificate for n0.flood.test") }, "\(lines.withLock { $0 })")
        #expect(manager.counters.queued == 19)
        // The scheduler looks every 5 s: due at renewAt, started by renewAt + 5 and a margin for a slow machine.
        let deadline = Double(renewAt + 9) - Date().timeIntervalSince1970
        #expect(
            waitUntil(max(1, deadline)) { logged("could not obtain a certificate for renewed.test") },
            "the renewal did not start within 9 s of its moment: \(lines.withLock { $0 })"
        )
        #expect(!logged("could not obtain a certificate for n1.flood.test"), "a rate-limited first order started")
        // Stopping wakes every waiting worker too: a server asked to stop does not sit out their minute.
        let stopping = Date()
        manager.stop()
        #expect(Date().timeIntervalSince(stopping) < 5, "stopping took \(Date().timeIntervalSince(stopping)) s")
    }
}
