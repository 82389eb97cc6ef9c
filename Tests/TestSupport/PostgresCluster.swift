import Foundation
import Glibc
import Synchronization

/// A real PostgreSQL server from Debian's `postgresql` package: a fresh `initdb` cluster in a temporary
/// directory, listening on a free loopback port (and a socket in that directory), stopped and removed
/// when released. fsync is off (the tests measure behaviour, not disks; a stopped server loses nothing,
/// as the kernel keeps what it wrote); commits stay synchronous, so a commit the store saw survives a stop.
/// As root, the cluster runs as the `postgres` user (initdb refuses root).
public final class PostgresCluster: Sendable {
    public let directory: String
    public let port: Int
    /// The superuser the tests connect as.
    public let user = "aasa"
    private let binaries: String

    /// `password`: TCP connections must give it (SCRAM); the socket stays trusted for the test's own setup.
    public init(password: String? = nil) throws {
        let versions = (try? FileManager.default.contentsOfDirectory(atPath: "/usr/lib/postgresql")) ?? []
        guard let version = versions.compactMap(Int.init).max() else {
            throw TestFailure("no PostgreSQL server installed (/usr/lib/postgresql/*/bin): apt-get install postgresql")
        }
        binaries = "/usr/lib/postgresql/\(version)/bin"
        directory = "/tmp/aasa-pg-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        port = try freeLoopbackPort()
        chmod(directory, 0o755)
        if getuid() == 0 { _ = try runTool(["chown", "postgres:postgres", directory]) }
        var initdb = ["\(binaries)/initdb", "-D", directory + "/data", "-U", user, "--no-sync", "-E", "UTF8", "--locale=C"]
        if let password {
            try Data(password.utf8).write(to: URL(fileURLWithPath: directory + "/password"))
            if getuid() == 0 { _ = try runTool(["chown", "postgres:postgres", directory + "/password"]) }
            initdb += ["--auth-local=trust", "--auth-host=scram-sha-256", "--pwfile=" + directory + "/password"]
        } else {
            initdb += ["-A", "trust"]
        }
        let made = try runTool(asOwner(initdb), timeout: 60)
        guard made.status == 0 else { throw TestFailure("initdb failed: \(made.stderr)") }
        try start()
    }

    private func asOwner(_ command: [String]) -> [String] {
        // setpriv executes the command itself (runuser would stay in between as its parent).
        getuid() == 0 ? ["/usr/bin/setpriv", "--reuid=postgres", "--regid=postgres", "--init-groups", "--"] + command : command
    }

    /// The postmaster, a child of the test process: started by the tests rather than by `pg_ctl`, whose
    /// daemon would inherit the test runner's descriptors and keep Foundation's Process waiting.
    private let server = Mutex<Process?>(nil)

    /// Starts the server (again) and waits until it accepts connections.
    public func start() throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: asOwner(["\(binaries)/postgres"])[0])
        process.arguments = Array(
            asOwner([
                "\(binaries)/postgres", "-D", directory + "/data", "-c", "listen_addresses=127.0.0.1", "-p", String(port), "-k", directory,
                "-c", "fsync=off", "-c", "full_page_writes=off",
            ]).dropFirst()
        )
        if !FileManager.default.fileExists(atPath: directory + "/server.log") {
            _ = FileManager.default.createFile(atPath: directory + "/server.log", contents: nil)
        }
        let log = FileHandle(forWritingAtPath: directory + "/server.log")
        log?.seekToEndOfFile()
        process.standardOutput = log
        process.standardError = log
        process.standardInput = FileHandle.nullDevice
        try process.run()
        server.withLock { $0 = process }
        let ready = waitUntil(30) {
            guard process.isRunning else { return true }
            return (try? runTool(["\(binaries)/pg_isready", "-q", "-h", "127.0.0.1", "-p", String(port)], timeout: 5).status) == 0
        }
        guard ready, process.isRunning else { throw TestFailure("PostgreSQL did not start: \(self.log)") }
    }

    /// Stops the server at once (SIGQUIT, `immediate`: what a crash or a lost network looks like to the
    /// clients), waiting until it has gone.
    public func stop() {
        guard let process = server.withLock({ $0 }) else { return }
        kill(process.processIdentifier, SIGQUIT)
        if !waitUntil(20, { !process.isRunning }) { kill(process.processIdentifier, SIGKILL) }
        _ = waitUntil(5) { !process.isRunning }
        server.withLock { $0 = nil }
    }

    public var log: String { (try? String(contentsOfFile: directory + "/server.log", encoding: .utf8)) ?? "" }

    /// Runs SQL through `psql` on the cluster's socket (trusted), as the superuser.
    @discardableResult
    public func sql(_ statement: String, database: String = "postgres") throws -> String {
        let result = try runTool(
            asOwner([
                "\(binaries)/psql", "-h", directory, "-p", String(port), "-U", user, "-d", database, "-X", "-A", "-t", "-v",
                "ON_ERROR_STOP=1", "-c", statement,
            ])
        )
        guard result.status == 0 else { throw TestFailure("psql \(statement): \(result.stderr)") }
        return String(decoding: result.stdout, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// A new empty database, and libpq's connection string for it over TCP.
    public func createDatabase(_ name: String = "links_\(UUID().uuidString.prefix(8).lowercased())") throws -> String {
        try sql("CREATE DATABASE \(name)")
        return connectionString(database: name)
    }

    public func connectionString(database: String) -> String {
        "host=127.0.0.1 port=\(port) dbname=\(database) user=\(user)"
    }

    deinit {
        stop()
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// One cluster for the tests of a process that need no server of their own (each takes a database of
    /// its own): started on first use, stopped when the process exits.
    public static let shared: Result<PostgresCluster, any Error> = {
        let cluster = Result { try PostgresCluster() }
        atexit {
            if case .success(let cluster) = PostgresCluster.shared {
                cluster.stop()
                try? FileManager.default.removeItem(atPath: cluster.directory)
            }
        }
        return cluster
    }()
}
