import Posix
import Support
import Synchronization
public import TLS

/// Checks hosts concurrently (at most 16 at a time, each bounded by its own deadline) and reports them
/// in the order given.
public enum Checker {
    public static func run(
        _ targets: [CheckTarget],
        options: ProbeOptions,
        trustAnchors: [String],
        expectations: @escaping @Sendable (CheckTarget) -> CheckExpectations
    ) throws(TLSError) -> [HostReport] {
        let probe = HostProbe(options: options, tls: try TLSClientContext(extraAnchors: trustAnchors))
        let results = TaskSlots<HostReport>(count: targets.count)
        let next = Atomic<Int>(0)
        let work: @Sendable () -> Void = {
            while true {
                let index = next.wrappingAdd(1, ordering: .relaxed).oldValue
                if index >= targets.count { return }
                let expected = expectations(targets[index])
                let observation = probe.observe(
                    targets[index],
                    apple: expected.apple,
                    android: expected.android,
                    linkPaths: expected.linkPaths
                )
                let findings = HostEvaluation.evaluate(observation, expected)
                results[index] = HostReport(target: targets[index], address: observation.address, findings: findings)
            }
        }
        var threads: [Posix.Thread] = []
        for _ in 0..<min(16, targets.count) {
            if let thread = try? Posix.Thread(work) { threads.append(thread) }
        }
        if threads.isEmpty { work() }
        for thread in threads { thread.join() }
        return results.filled()
    }
}
