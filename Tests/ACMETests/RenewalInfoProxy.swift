import Foundation
import Glibc
import TestSupport

/// Debian's Pebble (2.4) offers no renewal information (RFC 9773): this stands in front of its directory
/// and adds it. The directory is Pebble's with a `renewalInfo` URL of the proxy's; every other URL in it
/// is Pebble's own, so accounts, orders and certificates go to Pebble directly. The window and the
/// Retry-After it answers are the test's (`setWindow`); it counts the renewal-information requests.
final class RenewalInfoProxy {
    let port: Int
    private let directory: String
    private let process = Process()

    var directoryURL: String { "https://localhost:\(port)/dir" }

    init(_ pebble: Pebble) throws {
        port = try freeLoopbackPort()
        directory = pebble.directory + "/ari-\(port)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let script = #"""
            import http.server, json, os, ssl, sys, urllib.request
            port, pebble, folder, certificate, key, authority = sys.argv[1:7]
            upstream = ssl.create_default_context(cafile=authority)

            class Proxy(http.server.BaseHTTPRequestHandler):
                def do_GET(self):
                    if self.path == "/dir":
                        with urllib.request.urlopen(f"https://localhost:{pebble}/dir", context=upstream, timeout=10) as answer:
                            body = json.loads(answer.read())
                        body["renewalInfo"] = f"https://localhost:{port}/renewal-info"
                        return self.reply(200, json.dumps(body).encode(), {})
                    if self.path.startswith("/renewal-info/"):
                        with open(os.path.join(folder, "asked"), "a") as out:
                            out.write(self.path.rsplit("/", 1)[1] + "\n")
                        identifier = self.path.rsplit("/", 1)[1]
                        with open(os.path.join(folder, "window.json")) as source:
                            windows = json.load(source)
                        window = windows.get(identifier, windows["default"])
                        body = {"suggestedWindow": {"start": window["start"], "end": window["end"]}}
                        return self.reply(200, json.dumps(body).encode(), {"Retry-After": str(window["retryAfter"])})
                    self.reply(404, b"{}", {})

                def reply(self, status, body, headers):
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(body)))
                    for name, value in headers.items():
                        self.send_header(name, value)
                    self.end_headers()
                    self.wfile.write(body)

                def log_message(self, *args):
                    pass

            server = http.server.ThreadingHTTPServer(("127.0.0.1", int(port)), Proxy)
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.load_cert_chain(certificate, key)
            server.socket = context.wrap_socket(server.socket, server_side=True)
            server.serve_forever()
            """#
        try Data(script.utf8).write(to: URL(fileURLWithPath: directory + "/proxy.py"))
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = [
            directory + "/proxy.py", "\(port)", "\(pebble.port)", directory, pebble.directory + "/pebble.pem",
            pebble.directory + "/pebble.key", pebble.listenerAuthorityPath,
        ]
        process.standardOutput = FileHandle(forWritingAtPath: "/dev/null")
        process.standardError = FileHandle(forWritingAtPath: "/dev/null")
        try setWindow(start: Date().addingTimeInterval(30 * 86_400), end: Date().addingTimeInterval(31 * 86_400), retryAfter: 30)
        try process.run()
        guard
            waitUntil(
                10,
                {
                    (try? runTool(["curl", "-sf", "--cacert", pebble.listenerAuthorityPath, self.directoryURL], timeout: 3))?.status == 0
                }
            )
        else { throw TestFailure("the renewal-information proxy did not start") }
    }

    private var windows: [String: Any] = [:]

    /// What the next renewal-information answers say: for one certificate (its RFC 9773 identifier), or
    /// for every other one.
    func setWindow(start: Date, end: Date, retryAfter: Int, certificate: String = "default") throws {
        let format = ISO8601DateFormatter()
        windows[certificate] = ["start": format.string(from: start), "end": format.string(from: end), "retryAfter": retryAfter]
        try JSONSerialization.data(withJSONObject: windows).write(to: URL(fileURLWithPath: directory + "/window.json"), options: .atomic)
    }

    /// Renewal-information requests answered so far.
    var asked: Int {
        ((try? String(contentsOfFile: directory + "/asked", encoding: .utf8)) ?? "").split(separator: "\n").count
    }

    deinit {
        // SIGKILL: Python started from the test process inherits its blocked SIGTERM and would not end.
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }
}
