import Support

/// How many event loops the server starts: one per CPU the process may really use — the affinity mask
/// (taskset, cpusets) and the cgroup CPU quota (a container's `--cpus`, a Kubernetes limit), rounded up
/// — never all the host's CPUs. Pure: the files are read by ``CPUBudget/read(affinity:readFile:)``.
struct CPUBudget: Equatable {
    var loops: Int
    /// Why, for the start-up line: "cgroup quota 3.5 CPUs", "2 CPUs in the affinity mask".
    var reason: String

    /// `cpu.max` (cgroup v2): "max 100000" (no limit) or "350000 100000" (3.5 CPUs).
    static func parseV2(_ text: String) -> Double? {
        let fields = text.split(whereSeparator: { $0 == " " || $0 == "\n" })
        guard fields.count >= 2, fields[0] != "max", let quota = Double(fields[0]), let period = Double(fields[1]), quota > 0, period > 0
        else {
            return nil
        }
        return quota / period
    }

    /// `cpu.cfs_quota_us` and `cpu.cfs_period_us` (cgroup v1): a quota of -1 means no limit.
    static func parseV1(quota: String, period: String) -> Double? {
        guard let quota = Double(quota.trimmingWhitespace()), let period = Double(period.trimmingWhitespace()), quota > 0, period > 0 else {
            return nil
        }
        return quota / period
    }

    /// The cgroup path of this process from `/proc/self/cgroup`: the v2 line ("0::/path"), or the v1
    /// line whose controllers include `cpu`.
    static func cgroupPaths(_ text: String) -> (v2: String?, v1: String?) {
        var v2: String?
        var v1: String?
        for line in text.split(separator: "\n") {
            let parts = line.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false)
            guard parts.count == 3 else { continue }
            if parts[0] == "0" && parts[1].isEmpty { v2 = String(parts[2]) }
            if parts[1].split(separator: ",").contains("cpu") { v1 = String(parts[2]) }
        }
        return (v2, v1)
    }

    /// The budget from what the files say. `quotas` are the limits found on the process's cgroup and its
    /// ancestors (the smallest applies).
    static func decide(affinity: Int, quotas: [Double]) -> CPUBudget {
        let affinity = max(1, affinity)
        guard let quota = quotas.min() else {
            return CPUBudget(loops: affinity, reason: "\(affinity) CPU\(affinity == 1 ? "" : "s") available")
        }
        let rounded = max(1, Int(quota.rounded(.up)))
        if rounded < affinity {
            return CPUBudget(loops: rounded, reason: "cgroup quota \(format(quota)) CPUs")
        }
        return CPUBudget(
            loops: affinity,
            reason: "\(affinity) CPU\(affinity == 1 ? "" : "s") in the affinity mask, cgroup quota \(format(quota))"
        )
    }

    static func format(_ value: Double) -> String {
        value == value.rounded() ? String(Int(value)) : String((value * 100).rounded() / 100)
    }

    /// Reads the quota files of this process's cgroup and its ancestors (v2 under /sys/fs/cgroup, v1 under
    /// /sys/fs/cgroup/cpu or cpu,cpuacct).
    static func read(affinity: Int, readFile: (String) -> String?) -> CPUBudget {
        var quotas: [Double] = []
        let (v2, v1) = cgroupPaths(readFile("/proc/self/cgroup") ?? "")
        func ancestors(_ path: String) -> [String] {
            var result: [String] = []
            var current = path.hasSuffix("/") && path.count > 1 ? String(path.dropLast()) : path
            while true {
                result.append(current)
                guard current != "/", let slash = current.lastIndex(of: "/") else { break }
                current = slash == current.startIndex ? "/" : String(current[..<slash])
            }
            return result
        }
        if let v2 {
            for path in ancestors(v2) {
                if let text = readFile("/sys/fs/cgroup" + (path == "/" ? "" : path) + "/cpu.max"), let quota = parseV2(text) {
                    quotas.append(quota)
                }
            }
        }
        if let v1 {
            for root in ["/sys/fs/cgroup/cpu,cpuacct", "/sys/fs/cgroup/cpu"] {
                for path in ancestors(v1) {
                    let directory = root + (path == "/" ? "" : path)
                    if let quota = readFile(directory + "/cpu.cfs_quota_us"), let period = readFile(directory + "/cpu.cfs_period_us"),
                        let value = parseV1(quota: quota, period: period)
                    {
                        quotas.append(value)
                    }
                }
            }
        }
        return decide(affinity: affinity, quotas: quotas)
    }
}
