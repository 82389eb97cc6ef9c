import AASA
import HTTP1
import Posix
import Support

enum HealthcheckCommand {
    static let subcommand = CommandLineTool.Subcommand(
        name: "healthcheck",
        abstract: "Exit 0 when the running server's admin listener says it is healthy (for containers).",
        help: """
            OVERVIEW: Ask a running server's admin listener whether it is healthy: exit 0 when /healthz (or /readyz
            with --ready) answers 200, 1 otherwise. Made for Docker's HEALTHCHECK, so the image needs no curl.

            USAGE: aasa-server healthcheck [--admin HOST:PORT] [--ready] [--timeout SECONDS]

            OPTIONS:
              --admin HOST:PORT   The admin listener (default 127.0.0.1:9090): an address, or a name such as
                                  localhost:9090 (resolved within --timeout). An all-interfaces address such as
                                  0.0.0.0:9090 is asked on loopback.
              --ready             Ask /readyz (ready to take traffic; 503 while draining) instead of /healthz.
              --timeout SECONDS   Give up after this long (default 3).
              --help              Show this help.

            EXIT STATUS: 0 healthy (or ready), 1 not (no answer, or another status), 2 usage error.

            """,
        spec: ArgumentSpec(options: ["--admin", "--timeout"], flags: ["--ready"]),
        run: run
    )

    static func run(_ arguments: ParsedArguments, _ console: any Console) -> Int32 {
        let usage = subcommand.help
        var admin = ServerSettings.Listener(address: "127.0.0.1", port: 9090)
        var name: String?
        if let text = arguments.value("--admin") {
            switch ServerSettings.parseListenAddress(text) {
            case .success(let listener): admin = listener
            case .failure(let error):
                // Not an address: a name and a port, resolved below within the timeout.
                guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]), (1...65535).contains(port),
                    !text[..<colon].isEmpty, !text[..<colon].contains(":")
                else { return CommandLineTool.usageError("--admin \(error.message)", console: console, usage: usage) }
                name = String(text[..<colon])
                admin.port = port
            }
        }
        var timeout = 3.0
        if let text = arguments.value("--timeout") {
            guard let seconds = Double(text), seconds > 0, seconds <= 60 else {
                return CommandLineTool.usageError("--timeout takes seconds, from 0.1 to 60", console: console, usage: usage)
            }
            timeout = seconds
        }
        if let name {
            switch Posix.resolve(name, timeoutMilliseconds: Int32(timeout * 1000)) {
            case .success(let addresses) where !addresses.isEmpty:
                admin.address = addresses[0]
            case .success:
                console.err("unhealthy: \(name) resolves to no address\n")
                return ExitStatus.failure
            case .failure(let error):
                console.err("unhealthy: cannot resolve \(name): \(error.message)\n")
                return ExitStatus.failure
            }
        }
        // A listener on every interface answers on loopback too.
        let address = admin.address == "0.0.0.0" ? "127.0.0.1" : admin.address == "::" ? "::1" : admin.address
        let path = arguments.has("--ready") ? "/readyz" : "/healthz"
        switch get(address: address, port: admin.port, path: path, timeout: timeout) {
        case .success(let response) where response.status == 200:
            console.out("\(arguments.has("--ready") ? "ready" : "healthy"): \(path) answered 200\n")
            return ExitStatus.success
        case .success(let response):
            console.err("\(arguments.has("--ready") ? "not ready" : "unhealthy"): \(path) answered \(response.status) \(response.reason)\n")
            return ExitStatus.failure
        case .failure(let problem):
            console.err("unhealthy: \(problem) (admin listener \(admin.description))\n")
            return ExitStatus.failure
        }
    }

    struct Problem: Error, CustomStringConvertible {
        var description: String
    }

    /// One GET on a fresh connection, bounded by `timeout`. `Host` is the address itself, which the admin
    /// listener always accepts.
    /// The admin token in `--token-file` (nil without one), or why it cannot be used.
    static func token(_ arguments: ParsedArguments) -> Result<String?, UsageError> {
        guard let file = arguments.value("--token-file") else { return .success(nil) }
        guard let bytes = try? Posix.readFile(file, limit: 4096) else { return .failure(UsageError("--token-file \(file) cannot be read")) }
        let token = String(decoding: bytes, as: UTF8.self).trimmingWhitespace()
        guard !token.isEmpty, token.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
            return .failure(UsageError("--token-file \(file) holds no token"))
        }
        return .success(token)
    }

    /// Where to reach a listener: a wildcard listen address on loopback.
    static func reachable(_ listener: ServerSettings.Listener) -> String {
        listener.address == "0.0.0.0" ? "127.0.0.1" : listener.address == "::" ? "::1" : listener.address
    }

    static func get(
        address: String,
        port: Int,
        path: String,
        timeout: Double,
        bearerToken: String? = nil,
        method: String = "GET"
    ) -> Result<ParsedResponse, Problem> {
        let deadline = Posix.monotonicMilliseconds() + Int64(timeout * 1000)
        func remaining() -> Int32 { Int32(clamping: max(0, deadline - Posix.monotonicMilliseconds())) }
        let fd: Int32
        switch Posix.connect(address: address, port: port, timeoutMilliseconds: remaining()) {
        case .success(let socket): fd = socket
        case .failure(.timedOut): return .failure(Problem(description: "no connection within \(timeout) s"))
        case .failure(.failed(let error)): return .failure(Problem(description: error.reason.lowercased()))
        }
        defer { Posix.close(fd) }
        let host = address.contains(":") ? "[\(address)]" : address
        let authorization = bearerToken.map { "Authorization: Bearer \($0)\r\n" } ?? ""
        let request = Array(
            ("\(method) \(path) HTTP/1.1\r\nHost: \(host)\r\nUser-Agent: aasa-server-healthcheck\r\n\(authorization)"
                + (method == "POST" ? "Content-Length: 0\r\n" : "") + "Connection: close\r\n\r\n").utf8
        )
        var sent = 0
        while sent < request.count {
            switch request[sent...].withUnsafeBytes({ Posix.write(fd, $0) }) {
            case .bytes(let count): sent += count
            case .wouldBlock:
                guard Posix.wait(fd, for: .writable, timeoutMilliseconds: remaining()), remaining() > 0 else {
                    return .failure(Problem(description: "timed out sending the request"))
                }
            case .closed, .failed: return .failure(Problem(description: "the connection closed"))
            }
        }
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        while true {
            if case .complete(let response, _) = ResponseParser.parse(received, closed: false) { return .success(response) }
            switch buffer.withUnsafeMutableBytes({ Posix.read(fd, into: $0) }) {
            case .bytes(let count):
                received += buffer[0..<count]
            case .wouldBlock:
                guard Posix.wait(fd, for: .readable, timeoutMilliseconds: remaining()), remaining() > 0 else {
                    return .failure(Problem(description: "no answer within \(timeout) s"))
                }
            case .closed, .failed:
                switch ResponseParser.parse(received, closed: true) {
                case .complete(let response, _): return .success(response)
                case .failed(let error): return .failure(Problem(description: error.message))
                case .incomplete: return .failure(Problem(description: "the answer was cut off"))
                }
            }
        }
    }
}
