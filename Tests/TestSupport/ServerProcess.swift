import Foundation
import Glibc
import Synchronization

/// The real binary on ephemeral loopback ports. stdout and stderr go to files, so a chatty server can
/// never block on a full pipe, and the tests read them whenever they like.
public final class ServerProcess {
    public let process = Process()
    public let directory: String
    public let stdoutPath: String
    public let stderrPath: String
    public private(set) var port = 0
    public private(set) var adminPort = 0
    public private(set) var proxyPort = 0

    /// Writes `config` (JSON text) to a fresh directory and starts `serve` on 127.0.0.1:0.
    /// `command` replaces `serve --config <dir>/config.json` (for `dev`); "{dir}" in it is the temp directory.
    public init(
        config: String,
        files: [String: String] = [:],
        extraArguments: [String] = [],
        waitForReady: Bool = true,
        command: [String]? = nil,
        environment: [String: String] = [:],
        launcher: [String] = [],
        currentDirectory: String? = nil
    ) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("aasa-e2e-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try Data(config.utf8).write(to: URL(fileURLWithPath: directory + "/config.json"))
        for (name, text) in files {
            let path = directory + "/" + name
            try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        }
        stdoutPath = directory + "/stdout.log"
        stderrPath = directory + "/stderr.log"
        _ = FileManager.default.createFile(atPath: stdoutPath, contents: nil)
        _ = FileManager.default.createFile(atPath: stderrPath, contents: nil)
        let arguments =
            (command?.map { $0.replacingOccurrences(of: "{dir}", with: directory) } ?? ["serve", "--config", directory + "/config.json"])
            + extraArguments
        // A launcher (taskset, env) runs the server as its last arguments.
        process.executableURL = URL(fileURLWithPath: launcher.isEmpty ? TestPaths.serverExecutable : "/usr/bin/env")
        process.arguments = launcher.isEmpty ? arguments : launcher + [TestPaths.serverExecutable] + arguments
        process.standardOutput = FileHandle(forWritingAtPath: stdoutPath)
        process.standardError = FileHandle(forWritingAtPath: stderrPath)
        process.standardInput = FileHandle.nullDevice
        if let currentDirectory { process.currentDirectoryURL = URL(fileURLWithPath: currentDirectory) }
        if !environment.isEmpty { process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 } }
        try process.run()
        if waitForReady {
            // The line the server prints once every listener is bound ("serving 2 sites with 2 event loops"):
            // not just "serving ", which the built-in config's notice also says, before any port is known.
            let ready = #"serving [0-9]+ sites? with"#
            guard waitUntil(10, { stderr.range(of: ready, options: .regularExpression) != nil || !process.isRunning }) else {
                stop()
                throw TestFailure("server did not start: \(stderr)")
            }
            guard process.isRunning else { throw TestFailure("server exited: \(stderr)") }
            let ports = Self.ports(in: stderr)
            port = ports.main.first ?? 0
            proxyPort = ports.main.count > 1 ? ports.main[1] : 0
            adminPort = ports.admin ?? 0
        }
    }

    public static func ports(in text: String) -> (main: [Int], admin: Int?) {
        var main: [Int] = []
        var admin: Int?
        for line in text.split(separator: "\n") {
            guard let range = line.range(of: "://127.0.0.1:") else { continue }
            let digits = line[range.upperBound...].prefix { $0.isNumber }
            guard let value = Int(digits) else { continue }
            if line.contains("admin on") { admin = value } else if line.contains("listening on") { main.append(value) }
        }
        return (main, admin)
    }

    public var stdout: String { (try? String(contentsOfFile: stdoutPath, encoding: .utf8)) ?? "" }
    public var stderr: String { (try? String(contentsOfFile: stderrPath, encoding: .utf8)) ?? "" }
    public var pid: Int32 { process.processIdentifier }

    /// `aasa_open_connections` from the admin listener's `/metrics`: the client connections the server
    /// holds (nil when there is no admin listener or it does not answer).
    public func openConnections() -> Int? {
        guard adminPort > 0, let client = try? RawClient(port: adminPort, timeout: 2) else { return nil }
        client.send("GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        guard let body = client.readResponses(1, timeout: 2).first?.bodyText else { return nil }
        let line = body.split(separator: "\n").first { $0.hasPrefix("aasa_open_connections ") }
        return line.flatMap { Int($0.split(separator: " ").last ?? "") }
    }

    /// Waits (bounded) until the server holds `count` client connections: a client that sent bytes
    /// has been accepted and read, so what follows cannot overtake it.
    public func waitForOpenConnections(_ count: Int, timeout: Double = 5) -> Bool {
        waitUntil(timeout) { openConnections() == count }
    }

    public func signal(_ number: Int32) { kill(process.processIdentifier, number) }

    /// Waits for exit (bounded); returns the status, or nil if it did not exit in time.
    public func waitForExit(_ timeout: Double = 15) -> Int32? {
        guard waitUntil(timeout, { !process.isRunning }) else { return nil }
        return process.terminationStatus
    }

    /// SIGTERM, a bounded wait, then SIGKILL: nothing outlives the test — not even a server a launcher
    /// runs as its child (faketime forks rather than execs, and does not pass SIGTERM on).
    public func stop() {
        let children = process.isRunning ? Self.descendants(of: pid) : []
        if process.isRunning {
            signal(SIGTERM)
            if waitForExit(5) == nil {
                signal(SIGKILL)
                _ = waitForExit(5)
            }
        }
        for child in children { kill(child, SIGTERM) }
        if !children.isEmpty && !waitUntil(5, { children.allSatisfy { kill($0, 0) != 0 } }) {
            for child in children { kill(child, SIGKILL) }
        }
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// Every process below `parent`, from /proc (each process's parent is the fourth field of its stat).
    static func descendants(of parent: Int32) -> [Int32] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        var parents: [Int32: Int32] = [:]
        for name in names {
            guard let pid = Int32(name),
                let stat = FileHandle(forReadingAtPath: "/proc/\(pid)/stat")?.readDataToEndOfFile(),
                let text = String(data: stat, encoding: .utf8), let close = text.lastIndex(of: ")")
            else { continue }
            let fields = text[text.index(after: close)...].split(separator: " ")
            if fields.count > 1, let ppid = Int32(fields[1]) { parents[pid] = ppid }
        }
        var found: [Int32] = []
        var frontier = [parent]
        while let next = frontier.popLast() {
            let children = parents.filter { $0.value == next }.map(\.key)
            found += children
            frontier += children
        }
        return found
    }

    deinit { stop() }

    /// True when a shared library whose file name starts with `name` is mapped into the server process.
    public func hasLoaded(library name: String) -> Bool {
        // Read to its end: /proc reports a size of 0, which a read by size takes at its word.
        let data = FileHandle(forReadingAtPath: "/proc/\(pid)/maps")?.readDataToEndOfFile() ?? Data()
        let maps = String(decoding: data, as: UTF8.self)
        return maps.split(separator: "\n").contains { $0.split(separator: "/").last?.hasPrefix(name) == true }
    }

    /// Open descriptors of the server process (leak checks).
    public var openDescriptorCount: Int {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd").count) ?? -1
    }
}

/// A blocking loopback TCP client whose every read has a deadline.
public final class RawClient: @unchecked Sendable {
    public let fd: Int32

    public init(port: Int, timeout: Double = 5) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw TestFailure("socket failed") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard result == 0 else {
            Glibc.close(fd)
            throw TestFailure("connect to \(port) failed: errno \(errno)")
        }
    }

    deinit { Glibc.close(fd) }

    public func send(_ text: String) { send(Array(text.utf8)) }

    public func send(_ bytes: [UInt8]) {
        var offset = 0
        while offset < bytes.count {
            let count = bytes[offset...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if count <= 0 { return }
            offset += count
        }
    }

    public func shutdownWrite() { Glibc.shutdown(fd, Int32(SHUT_WR)) }

    /// Reads whatever arrives within `timeout`; stops at EOF. Returns (bytes, sawEOF).
    public func read(timeout: Double = 5, until stop: ([UInt8]) -> Bool = { _ in false }) -> (bytes: [UInt8], closed: Bool) {
        var received: [UInt8] = []
        let deadline = monotonicSeconds() + timeout
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let remaining = deadline - monotonicSeconds()
            if remaining <= 0 { return (received, false) }
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&poller, 1, Int32(max(1, remaining * 1000)))
            if ready <= 0 { return (received, false) }
            let count = buffer.withUnsafeMutableBytes { Glibc.recv(fd, $0.baseAddress, $0.count, 0) }
            if count <= 0 { return (received, true) }
            received += buffer[0..<count]
            if stop(received) { return (received, false) }
        }
    }

    /// Reads until `count` complete responses (by Content-Length) have arrived.
    public func readResponses(_ count: Int, timeout: Double = 5, headRequests: Int = 0) -> [HTTPResponse] {
        var responses: [HTTPResponse] = []
        _ = read(timeout: timeout) { bytes in
            responses = HTTPResponse.parseAll(bytes, headRequests: headRequests)
            return responses.count >= count
        }
        return responses
    }
}

/// A response as the tests see it.
public struct HTTPResponse {
    public var status: Int
    public var headers: [(String, String)]
    public var body: [UInt8]

    public func header(_ name: String) -> String? {
        headers.first { $0.0.lowercased() == name.lowercased() }?.1
    }

    public var bodyText: String { String(decoding: body, as: UTF8.self) }

    /// Splits a byte stream into complete responses. The first `headRequests` have no body.
    public static func parseAll(_ bytes: [UInt8], headRequests: Int = 0) -> [HTTPResponse] {
        var responses: [HTTPResponse] = []
        var offset = 0
        let separator: [UInt8] = [13, 10, 13, 10]
        while offset < bytes.count {
            guard let end = bytes[offset...].firstRange(of: separator) else { break }
            let headText = String(decoding: bytes[offset..<end.lowerBound], as: UTF8.self)
            var lines = headText.components(separatedBy: "\r\n")
            let statusLine = lines.removeFirst().split(separator: " ")
            guard statusLine.count >= 2, let status = Int(statusLine[1]) else { break }
            let headers = lines.compactMap { line -> (String, String)? in
                guard let colon = line.firstIndex(of: ":") else { return nil }
                return (String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
            }
            let length = headers.first { $0.0.lowercased() == "content-length" }.flatMap { Int($0.1) } ?? 0
            let bodyLength = responses.count < headRequests ? 0 : length
            guard bytes.count - end.upperBound >= bodyLength else { break }
            responses.append(
                HTTPResponse(status: status, headers: headers, body: Array(bytes[end.upperBound..<(end.upperBound + bodyLength)]))
            )
            offset = end.upperBound + bodyLength
        }
        return responses
    }
}

/// A config serving example.com / www.example.com with a document big enough to be gzipped.
public func testConfig(
    server: String = #"{"listen": ["127.0.0.1:0"], "admin": "127.0.0.1:0"}"#,
    unknownHost: String = "empty",
    extraSites: String = ""
) -> String {
    let components = (0..<40).map { #"{"/": "/section-\#($0)/*", "comment": "section \#($0)"}"# }.joined(separator: ",")
    return #"""
        {"version": 1, "apps": {"shop": "ABCDE12345.com.example.shop"},
         "sites": [
           {"hosts": ["example.com", "www.example.com"],
            "applinks": {"details": [{"apps": ["shop"], "components": [{"/": "/admin/*", "exclude": true}, \#(components)]}]}},
           {"hosts": ["*.tenant.example.com"], "webcredentials": {"apps": ["shop"]}}\#(extraSites)
         ],
         "unknownHost": "\#(unknownHost)",
         "server": \#(server)}
        """#
}

/// A loopback port free at the time of asking, for a helper process that cannot be told to pick one (nginx).
/// Picked below the kernel's ephemeral range: a port `bind(0)` chose returns to that range when closed, where
/// any outgoing connection of a parallel test may take it before the helper binds it. No port is handed out
/// twice in one test run.
public func freeLoopbackPort() throws -> Int {
    let ephemeralStart =
        (try? String(contentsOfFile: "/proc/sys/net/ipv4/ip_local_port_range", encoding: .utf8))
        .flatMap { $0.split(whereSeparator: \.isWhitespace).first.flatMap { Int($0) } } ?? 32768
    let floor = ephemeralStart > 21000 ? 20000 : 1024
    for _ in 0..<1000 {
        let port = Int.random(in: floor..<ephemeralStart)
        guard portsHandedOut.withLock({ $0.insert(port).inserted }) else { continue }
        if loopbackPortIsFree(port) { return port }
    }
    throw TestFailure("no free loopback port between \(floor) and \(ephemeralStart)")
}

private let portsHandedOut = Mutex<Set<Int>>([])

private func loopbackPortIsFree(_ port: Int) -> Bool {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { return false }
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = in_port_t(UInt16(port).bigEndian)
    let length = socklen_t(MemoryLayout<sockaddr_in>.size)
    return withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) } } == 0
}

/// A value from the server's /metrics (the line that starts with `name` and a space).
public func metric(_ server: ServerProcess, _ name: String) -> Int? {
    guard let client = try? RawClient(port: server.adminPort, timeout: 3) else { return nil }
    client.send("GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
    guard let body = client.readResponses(1, timeout: 3).first?.bodyText else { return nil }
    let line = body.split(separator: "\n").first { $0.hasPrefix(name + " ") }
    return line.flatMap { Int($0.split(separator: " ").last ?? "") }
}

/// Debian's HAProxy running one of `deploy/haproxy`'s files as it ships: only addresses and file
/// locations come from `environment`. Stopped (SIGTERM, then SIGKILL) when released.
public final class HAProxyProcess {
    public let process = Process()

    /// `config`: a file name under deploy/haproxy. `logPath`: where its output goes (nowhere when nil).
    public init(config: String, environment: [String: String], logPath: String? = nil) throws {
        process.executableURL = URL(fileURLWithPath: "/usr/sbin/haproxy")
        process.arguments = ["-f", TestPaths.repositoryRoot + "/deploy/haproxy/" + config, "-db"]
        process.environment = environment
        if let logPath {
            _ = FileManager.default.createFile(atPath: logPath, contents: nil)
            process.standardOutput = FileHandle(forWritingAtPath: logPath)
            process.standardError = FileHandle(forWritingAtPath: logPath)
        } else {
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
        }
        process.standardInput = FileHandle.nullDevice
        try process.run()
    }

    public var isRunning: Bool { process.isRunning }

    deinit {
        process.terminate()
        _ = waitUntil(5) { !process.isRunning }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    }
}
