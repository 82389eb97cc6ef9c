import Foundation
import Glibc
import TestSupport
import Testing

@testable import Server

/// What a deployment relies on: loops sized to the CPUs the container may use, a health check without
/// curl, and systemd's readiness protocol.
@Suite("Deployment support")
struct DeploymentTests {
    static let fixtures = TestPaths.repositoryRoot + "/Tests/DeploymentTests/Fixtures/cgroup/"

    static func fixture(_ name: String) -> String { (try? String(contentsOfFile: fixtures + name, encoding: .utf8)) ?? "" }

    @Test("deploy/README's nginx example routes the AASA paths and assetlinks.json and reuses upstream connections")
    func nginxExample() throws {
        let nginx = "/usr/sbin/nginx"
        try #require(FileManager.default.isExecutableFile(atPath: nginx), "nginx is installed by .ci/run")
        let readme = try String(contentsOfFile: TestPaths.repositoryRoot + "/deploy/README.md", encoding: .utf8)
        let afterHeading = try #require(readme.range(of: "**nginx** in front")).upperBound
        let blockStart = try #require(readme.range(of: "```nginx\n", range: afterHeading..<readme.endIndex)).upperBound
        let blockEnd = try #require(readme.range(of: "```", range: blockStart..<readme.endIndex)).lowerBound
        let server = try ServerProcess(config: testConfig())
        defer { server.stop() }
        let port = try freeLoopbackPort()
        let directory = server.directory + "/nginx"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let snippet = String(readme[blockStart..<blockEnd])
            .replacingOccurrences(of: "10.0.1.10:8080", with: "127.0.0.1:\(server.port)")
            .replacingOccurrences(of: "# ... listen 443 ssl; server_name ...; ssl_certificate ...;", with: "listen 127.0.0.1:\(port);")
        let temporaryPaths = ["client_body", "proxy", "fastcgi", "uwsgi", "scgi"].map { "\($0)_temp_path \(directory)/\($0);" }
        let conf = """
            daemon off; master_process off; pid \(directory)/nginx.pid; error_log \(directory)/error.log;
            events {}
            http { access_log off; \(temporaryPaths.joined(separator: " "))
            \(snippet)
            }
            """
        try conf.write(toFile: directory + "/nginx.conf", atomically: true, encoding: .utf8)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: nginx)
        process.arguments = ["-p", directory, "-c", directory + "/nginx.conf"]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        // nginx must not outlive the test: SIGTERM, a bounded wait, then SIGKILL.
        defer {
            process.terminate()
            if !waitUntil(5, { !process.isRunning }) { kill(process.processIdentifier, SIGKILL) }
        }
        func get(_ path: String) throws -> (status: String, body: String) {
            let result = try runTool([
                "curl", "-s", "--max-time", "5", "-H", "Host: example.com", "-o", "-", "-w", "\n%{http_code}",
                "http://127.0.0.1:\(port)\(path)",
            ])
            let lines = String(decoding: result.stdout, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
            return (String(lines.last ?? ""), lines.dropLast().joined(separator: "\n"))
        }
        #expect(waitUntil(5) { (try? get("/.well-known/apple-app-site-association"))?.status == "200" }, "nginx did not proxy")
        let legacy = try get("/apple-app-site-association")
        #expect(legacy.status == "200" && legacy.body.contains("ABCDE12345.com.example.shop"))
        // aasa-server's own answer for a host without Android apps: the request reached it through nginx.
        let assetLinks = try get("/.well-known/assetlinks.json")
        #expect(assetLinks.status == "404" && assetLinks.body.contains("no Android apps are configured"), "\(assetLinks)")
        // Every request came over one upstream connection: the same client address and port.
        #expect(waitUntil(3) { server.stdout.split(separator: "\n").count >= 3 })
        let clients = Set(
            server.stdout.split(separator: "\n").compactMap { line -> String? in
                guard let range = line.range(of: #""client":""#) else { return nil }
                return String(line[range.upperBound...].prefix { $0 != "\"" })
            }
        )
        #expect(clients.count == 1, "upstream keep-alive: \(clients)")
    }

    @Test("cgroup quota parsing from fixture files: cpu.max (v2), cfs quota/period (v1), /proc/self/cgroup")
    func quotaParsing() {
        #expect(CPUBudget.parseV2(Self.fixture("cpu.max-3.5")) == 3.5)
        #expect(CPUBudget.parseV2(Self.fixture("cpu.max-unlimited")) == nil)
        #expect(CPUBudget.parseV1(quota: Self.fixture("cfs_quota_us-1.5"), period: Self.fixture("cfs_period_us")) == 1.5)
        #expect(CPUBudget.parseV1(quota: Self.fixture("cfs_quota_us-unlimited"), period: Self.fixture("cfs_period_us")) == nil)
        #expect(
            CPUBudget.cgroupPaths(Self.fixture("proc-self-cgroup-v2")).v2
                == "/kubepods.slice/kubepods-burstable.slice/pod1234/cri-containerd-abc"
        )
        #expect(CPUBudget.cgroupPaths(Self.fixture("proc-self-cgroup-v1")).v1 == "/docker/abc")
    }

    @Test("The loop count follows the quota (rounded up) and the affinity mask, never more; the reason is stated")
    func budget() {
        #expect(CPUBudget.decide(affinity: 8, quotas: [3.5]) == CPUBudget(loops: 4, reason: "cgroup quota 3.5 CPUs"))
        #expect(CPUBudget.decide(affinity: 2, quotas: [3.5]).loops == 2)
        #expect(CPUBudget.decide(affinity: 8, quotas: []).loops == 8)
        #expect(CPUBudget.decide(affinity: 8, quotas: [0.25]).loops == 1)
        // A limit on a parent cgroup counts: the smallest applies.
        let files: [String: String] = [
            "/proc/self/cgroup": Self.fixture("proc-self-cgroup-v2"),
            "/sys/fs/cgroup/kubepods.slice/kubepods-burstable.slice/pod1234/cri-containerd-abc/cpu.max": "max 100000\n",
            "/sys/fs/cgroup/kubepods.slice/kubepods-burstable.slice/pod1234/cpu.max": Self.fixture("cpu.max-3.5"),
            "/sys/fs/cgroup/kubepods.slice/cpu.max": "1200000 100000\n",
        ]
        #expect(CPUBudget.read(affinity: 16) { files[$0] } == CPUBudget(loops: 4, reason: "cgroup quota 3.5 CPUs"))
        let v1: [String: String] = [
            "/proc/self/cgroup": Self.fixture("proc-self-cgroup-v1"),
            "/sys/fs/cgroup/cpu,cpuacct/docker/abc/cpu.cfs_quota_us": Self.fixture("cfs_quota_us-1.5"),
            "/sys/fs/cgroup/cpu,cpuacct/docker/abc/cpu.cfs_period_us": Self.fixture("cfs_period_us"),
        ]
        #expect(CPUBudget.read(affinity: 16) { v1[$0] }.loops == 2)
    }

    @Test("The start-up line says how many loops and why; taskset's mask is respected")
    func startupLine() throws {
        let server = try ServerProcess(config: testConfig())
        defer { server.stop() }
        #expect(server.stderr.contains("event loop"))
        #expect(server.stderr.contains("CPU") || server.stderr.contains("cgroup quota"))
        let pinned = try ServerProcess(config: testConfig(), launcher: ["taskset", "-c", "0"])
        defer { pinned.stop() }
        #expect(pinned.stderr.contains("with 1 event loop ("), "\(pinned.stderr)")
    }

    @Test("healthcheck: 0 when /healthz (or /readyz) answers 200, 1 when nothing answers or while draining")
    func healthcheck() throws {
        let server = try ServerProcess(
            config: testConfig(server: #"{"listen": ["127.0.0.1:0"], "admin": "127.0.0.1:0", "timeouts": {"drain": 3}}"#)
        )
        defer { server.stop() }
        let admin = "127.0.0.1:\(server.adminPort)"
        let healthy = try runTool([TestPaths.serverExecutable, "healthcheck", "--admin", admin])
        #expect(healthy.status == 0 && String(decoding: healthy.stdout, as: UTF8.self) == "healthy: /healthz answered 200\n")
        let ready = try runTool([TestPaths.serverExecutable, "healthcheck", "--admin", admin, "--ready"])
        #expect(ready.status == 0 && String(decoding: ready.stdout, as: UTF8.self) == "ready: /readyz answered 200\n")
        // The start-up banner names every admin page, the console included.
        #expect(server.stderr.contains("(/healthz, /readyz, /metrics, /status, /console, POST /reload)"), "\(server.stderr)")
        let nothing = try runTool([TestPaths.serverExecutable, "healthcheck", "--admin", "127.0.0.1:1", "--timeout", "1"])
        #expect(nothing.status == 1)
        #expect(nothing.stderr.contains("unhealthy"))
        // While draining, /readyz says 503.
        let busy = try RawClient(port: server.port)
        busy.send("GET / HTTP/1.1\r\n")
        #expect(server.waitForOpenConnections(1))
        server.signal(SIGTERM)
        #expect(waitUntil(3) { (try? runTool([TestPaths.serverExecutable, "healthcheck", "--admin", admin, "--ready"]).status) == 1 })
    }

    /// A datagram socket the test binds, standing in for systemd.
    final class NotifyListener {
        let fd: Int32
        let name: String

        init(abstract: Bool) throws {
            fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            let unique = "aasa-notify-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
            name = abstract ? "@" + unique : FileManager.default.temporaryDirectory.appendingPathComponent(unique).path
            var address = sockaddr_un()
            address.sun_family = sa_family_t(AF_UNIX)
            var bytes = Array(name.utf8)
            if abstract { bytes[0] = 0 }
            withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
            let length = socklen_t(MemoryLayout<sa_family_t>.size + bytes.count + (abstract ? 0 : 1))
            let result = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) } }
            guard result == 0 else { throw TestFailure("bind \(name): errno \(errno)") }
        }

        deinit {
            Glibc.close(fd)
            if !name.hasPrefix("@") { unlink(name) }
        }

        /// The next datagram within `timeout`, as lines.
        func next(timeout: Double = 5) -> [String]? {
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, Int32(timeout * 1000)) > 0 else { return nil }
            var buffer = [UInt8](repeating: 0, count: 4096)
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            guard count > 0 else { return nil }
            return String(decoding: buffer[0..<count], as: UTF8.self).split(separator: "\n").map(String.init)
        }
    }

    @Test(
        "systemd notify (path and abstract sockets): READY=1 once listening, RELOADING=1 + MONOTONIC_USEC then READY=1 around a reload, STOPPING=1 on drain",
        arguments: [false, true]
    )
    func systemdNotify(abstract: Bool) throws {
        let listener = try NotifyListener(abstract: abstract)
        let server = try ServerProcess(config: testConfig(), environment: ["NOTIFY_SOCKET": listener.name])
        defer { server.stop() }
        let ready = try #require(listener.next())
        #expect(ready.contains("READY=1"))
        #expect(ready.contains { $0.hasPrefix("STATUS=serving 2 sites, 3 hosts (config generation 1)") }, "\(ready)")
        #expect(ready.contains("MAINPID=\(server.pid)"))
        server.signal(SIGHUP)
        let reloading = try #require(listener.next())
        #expect(reloading.contains("RELOADING=1"))
        #expect(reloading.contains { $0.hasPrefix("MONOTONIC_USEC=") && Int($0.dropFirst(15)) != nil })
        let readyAgain = try #require(listener.next())
        #expect(readyAgain.contains("READY=1"))
        #expect(readyAgain.contains { $0.contains("config generation 2") })
        server.signal(SIGTERM)
        let stopping = try #require(listener.next())
        #expect(stopping.contains("STOPPING=1"))
    }
}
