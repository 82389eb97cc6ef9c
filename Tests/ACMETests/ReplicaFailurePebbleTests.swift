import Foundation
import Glibc
import TestSupport
import Testing

/// Replicas of the real binary sharing one storage directory, failing the ways replicas fail in
/// production: killed mid-order, and a clock ten minutes off.
@Suite(
    "Replicas that die or disagree about the time (Pebble)",
    .serialized,
    .enabled(if: Pebble.installed, "pebble is not installed (apt-get install pebble)")
)
struct ReplicaFailurePebbleTests {
    /// libfaketime's own launcher (it prepares what the library needs before the program starts).
    static let faketime = "/usr/bin/faketime"

    /// A DNS-01 hook that never finishes presenting: the order it is part of stays in the middle. It
    /// writes its process id first, so the test can end it.
    static func hangingHook(in directory: String) throws -> (hook: String, pidFile: String) {
        let pidFile = directory + "/hanging-hook.pid"
        let hook = directory + "/hanging-hook.sh"
        try Data("#!/bin/sh\nif [ \"$1\" = present ]; then echo $$ > \(pidFile); exec sleep 300; fi\nexit 0\n".utf8)
            .write(to: URL(fileURLWithPath: hook))
        chmod(hook, 0o755)
        return (hook, pidFile)
    }

    static func files(named name: String, under root: String) -> [String] {
        guard let walker = FileManager.default.enumerator(atPath: root) else { return [] }
        return walker.compactMap { $0 as? String }.filter { ($0 as NSString).lastPathComponent == name }
    }

    @Test(
        "A replica SIGKILLed mid-order: the other takes its lock over once it is stale (lockStaleAfter) and resumes the same order: one order, one certificate"
    )
    func killedMidOrder() throws {
        let pebble = try Pebble()
        let storage = FileManager.default.temporaryDirectory.appendingPathComponent("aasa-acme-kill-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: storage) }
        let (hanging, pidFile) = try Self.hangingHook(in: pebble.directory)
        let acme = #""challenges": ["dns-01"], "lockStaleAfter": 30, "dnsHook": "#
        let doomed = try ServerProcess(
            config: acmeConfig(
                pebble,
                sites: sites([["kill.test"]]),
                storage: storage,
                acme: acme + "\"\(hanging)\"",
                plainPort: try freeLoopbackPort(),
                tlsPort: try freeLoopbackPort()
            )
        )
        defer { doomed.stop() }
        #expect(waitUntil(60) { FileManager.default.fileExists(atPath: pidFile) }, "\(doomed.stderr)")
        #expect(Self.files(named: "order.json", under: storage).count == 1, "the order is stored before any challenge")
        #expect(Self.files(named: "kill.test.lock", under: storage).count == 1)
        doomed.signal(SIGKILL)
        _ = doomed.waitForExit(10)
        let killedAt = monotonicSeconds()
        if let text = try? String(contentsOfFile: pidFile, encoding: .utf8),
            let pid = Int32(text.trimmingCharacters(in: .whitespacesAndNewlines))
        {
            kill(pid, SIGKILL)
        }
        #expect(pebble.orderCount == 1)

        let survivor = try ServerProcess(
            config: acmeConfig(pebble, sites: sites([["kill.test"]]), storage: storage, acme: acme + "\"\(try pebble.writeDNSHook())\"")
        )
        defer { survivor.stop() }
        #expect(waitUntil(75) { survivor.stderr.contains("resuming the order for kill.test") }, "\(survivor.stderr)")
        // The lock was last touched at most one heartbeat (10 s) before the kill: taken over 30 s after that.
        let tookOver = monotonicSeconds() - killedAt
        #expect(tookOver < 45, "taken over \(tookOver) s after the kill")
        #expect(waitUntil(60) { survivor.stderr.contains("obtained a certificate for kill.test") }, "\(survivor.stderr)")
        #expect(pebble.orderCount == 1, "the same order, resumed: \(pebble.orderCount) orders")
        #expect(httpsStatus("kill.test", port: pebble.tlsPort, root: try pebble.rootFile()) == 200)
        #expect(Self.files(named: "order.json", under: storage).isEmpty, "a finished order is not resumed again")
    }

    @Test(
        "Two replicas, one with its clock ten minutes ahead (libfaketime, file times real): no lock is judged stale, one order per host",
        .enabled(if: FileManager.default.fileExists(atPath: faketime), "libfaketime is not installed (apt-get install faketime)")
    )
    func skewedClock() throws {
        let pebble = try Pebble()
        let storage = FileManager.default.temporaryDirectory.appendingPathComponent("aasa-acme-skew-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: storage) }
        // Each order presents for 35 s, longer than lockStaleAfter: a replica judging the other's locks by
        // its own clock would see every one of them 10 minutes old and take it over.
        let slow = pebble.directory + "/slow-hook.sh"
        try Data("#!/bin/sh\nif [ \"$1\" = present ]; then sleep 35; fi\nexec \(try pebble.writeDNSHook()) \"$@\"\n".utf8)
            .write(to: URL(fileURLWithPath: slow))
        chmod(slow, 0o755)
        let hosts = (0..<4).map { "skew\($0).test" }
        // Five workers: the four first orders all run at once (one worker stays kept for renewals), so the
        // on-time replica holds every lock before the skewed one starts.
        let acme = #""challenges": ["dns-01"], "lockStaleAfter": 30, "maxConcurrentOrders": 5, "dnsHook": "\#(slow)""#
        let onTime = try ServerProcess(config: acmeConfig(pebble, sites: sites(hosts.map { [$0] }), storage: storage, acme: acme))
        defer { onTime.stop() }
        #expect(waitUntil(30) { onTime.stderr.components(separatedBy: "ordered a certificate for").count - 1 == hosts.count })
        let aheadTLS = try freeLoopbackPort()
        let ahead = try ServerProcess(
            config: acmeConfig(
                pebble,
                sites: sites(hosts.map { [$0] }),
                storage: storage,
                acme: acme,
                plainPort: try freeLoopbackPort(),
                tlsPort: aheadTLS
            ),
            // NO_FAKE_STAT: the file times it reads are the file system's, as on a shared volume whose
            // server keeps the right time.
            launcher: ["NO_FAKE_STAT=1", "DONT_FAKE_MONOTONIC=1", Self.faketime, "-m", "-f", "+10m"]
        )
        defer { ahead.stop() }
        // The clock really is ten minutes ahead: its Date header says so.
        let head = try runTool(["curl", "-sI", "-H", "Host: skew0.test", "http://127.0.0.1:\(ahead.port)/apple-app-site-association"])
        let dateLine = String(decoding: head.stdout, as: UTF8.self).split(separator: "\r\n").first { $0.lowercased().hasPrefix("date:") }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
        let served = dateLine.flatMap { formatter.date(from: String($0.dropFirst(5)).trimmingCharacters(in: .whitespaces)) }
        let skew = served.map { $0.timeIntervalSinceNow } ?? 0
        #expect(skew > 590 && skew < 610, "the skewed replica's clock: \(String(describing: dateLine))")

        #expect(
            waitUntil(120) { hosts.allSatisfy { onTime.stderr.contains("obtained a certificate for \($0)") } },
            "\(onTime.stderr.suffix(2000))"
        )
        // The skewed replica waited on the locks, then found the certificates stored.
        Thread.sleep(forTimeInterval: 3)
        #expect(pebble.orderCount == hosts.count, "orders at pebble: \(pebble.orderCount); skewed: \(ahead.stderr.suffix(2000))")
        #expect(!ahead.stderr.contains("ordered a certificate for"), "\(ahead.stderr)")
        #expect(!onTime.stderr.contains("stopped working on"), "no lock was taken over: \(onTime.stderr)")
        let root = try pebble.rootFile()
        for host in hosts {
            #expect(waitUntil(40) { httpsStatus(host, port: aheadTLS, root: root) == 200 }, "\(host) from the skewed replica")
        }
    }
}
