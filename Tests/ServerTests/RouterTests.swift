import AASA
import HTTP1
import Links
import TestSupport
import Testing

@testable import Server

/// Routes requests without a socket (Hummingbird's `.router` mode): a request's bytes are parsed as the
/// connection would, then routed against a snapshot built from a config.
struct RouterHarness {
    let snapshot: Snapshot
    var view = AdminView(
        isDraining: false,
        lastReloadFailed: false,
        metrics: { "aasa_up 1\n" },
        status: { host in host == "example.com" || host == nil ? Array("{\"host\":\"\(host ?? "*")\"}".utf8) : nil },
        console: { path, query in
            path == "/console"
                ? ConsoleRenderer.Answer(status: 200, contentType: "text/html; charset=utf-8", body: Array("q=\(query)".utf8)) : nil
        }
    )

    init(_ config: String = testConfig(), adminPolicy: AdminPolicy = AdminPolicy()) {
        let loaded = ConfigLoader.load(
            configBytes: Array(config.utf8),
            configPath: "/config.json",
            readFile: { _ in .failure(FileReadError("none")) }
        )
        precondition(!loaded.hasErrors, "\(loaded.diagnostics)")
        snapshot = Snapshot(config: loaded, settings: loaded.config!.server, adminPolicy: adminPolicy, generation: 7, now: 1_764_500_000)
    }

    func route(
        _ request: String,
        on listener: ListenerRole = .main,
        linkAnswers: LinkAnswerCache? = nil,
        storedLinks: ShortLinkTable? = nil
    ) -> Route {
        var parser = RequestHeadParser()
        let bytes = Array(request.utf8)
        return bytes.withUnsafeBufferPointer { buffer in
            guard case .complete(let head) = parser.parse(buffer) else { preconditionFailure("not a complete request: \(request)") }
            return Router.route(
                head,
                in: buffer,
                listener: listener,
                snapshot: snapshot,
                admin: { view },
                linkAnswers: linkAnswers,
                storedLinks: storedLinks
            )
        }
    }

    func response(_ request: String, on listener: ListenerRole = .main) -> (response: PreparedResponse, site: String, pathClass: PathClass)?
    {
        guard case .respond(let response, let site, let pathClass) = route(request, on: listener) else { return nil }
        return (response, site, pathClass)
    }
}

extension PreparedResponse {
    var headText: String { String(decoding: head, as: UTF8.self) }
    var bodyText: String { String(decoding: body, as: UTF8.self) }
}

@Suite("Router (no sockets)")
struct RouterTests {
    let router = RouterHarness()

    @Test("Both AASA paths answer the site's document by Host: exact, any case, port, trailing dot")
    func aasaByHost() throws {
        for (request, label) in [
            ("GET /.well-known/apple-app-site-association HTTP/1.1\r\nHost: example.com\r\n\r\n", "example.com"),
            ("GET /apple-app-site-association HTTP/1.1\r\nHost: WWW.Example.COM.:8080\r\n\r\n", "www.example.com"),
            ("HEAD /.well-known/apple-app-site-association?x=1 HTTP/1.1\r\nHost: example.com\r\n\r\n", "example.com"),
        ] {
            let answer = try #require(router.response(request))
            #expect(answer.response.status == 200)
            // The metrics label: the config host that matched, normalised.
            #expect(answer.site == label)
            #expect(answer.pathClass == .aasa)
            #expect(answer.response.headText.contains("Content-Type: application/json\r\n"))
            #expect(answer.response.bodyText.contains("ABCDE12345.com.example.shop"))
        }
    }

    @Test("A wildcard site covers subdomains; an unknown host gets the empty document, or 404 when configured")
    func wildcardAndUnknown() throws {
        let tenant = try #require(
            router.response("GET /.well-known/apple-app-site-association HTTP/1.1\r\nHost: a.tenant.example.com\r\n\r\n")
        )
        #expect(tenant.site == "*.tenant.example.com")
        let unknown = try #require(router.response("GET /.well-known/apple-app-site-association HTTP/1.1\r\nHost: other.org\r\n\r\n"))
        #expect(unknown.response.status == 200)
        #expect(unknown.site == "unknown")
        #expect(unknown.response.bodyText == #"{"applinks":{"details":[]}}"#)

        let strict = RouterHarness(testConfig(unknownHost: "404"))
        let refused = try #require(strict.response("GET /.well-known/apple-app-site-association HTTP/1.1\r\nHost: other.org\r\n\r\n"))
        #expect(refused.response.status == 404)
    }

    @Test("gzip only when the client accepts it, with its own ETag")
    func gzip() throws {
        let plain = try #require(router.response("GET /.well-known/apple-app-site-association HTTP/1.1\r\nHost: example.com\r\n\r\n"))
        let zipped = try #require(
            router.response(
                "GET /.well-known/apple-app-site-association HTTP/1.1\r\nHost: example.com\r\nAccept-Encoding: br, gzip\r\n\r\n"
            )
        )
        #expect(!plain.response.headText.contains("Content-Encoding"))
        #expect(zipped.response.headText.contains("Content-Encoding: gzip\r\n"))
        #expect(zipped.response.headText.contains("-gz\"\r\n"))
    }

    @Test("Methods: POST on a document is 405 with Allow; an unknown method is 501; OPTIONS * lists what is allowed")
    func methods() throws {
        let post = try #require(router.response("POST /.well-known/apple-app-site-association HTTP/1.1\r\nHost: example.com\r\n\r\n"))
        #expect(post.response.status == 405)
        #expect(post.response.headText.contains("Allow: GET, HEAD\r\n"))
        #expect(post.response.headText.hasPrefix("HTTP/1.1 405 Method Not Allowed\r\n"))
        let brew = try #require(router.response("BREW / HTTP/1.1\r\nHost: example.com\r\n\r\n"))
        #expect(brew.response.status == 501)
        let options = try #require(router.response("OPTIONS * HTTP/1.1\r\nHost: example.com\r\n\r\n"))
        #expect(options.response.status == 200)
        #expect(options.response.headText.contains("Allow: GET, HEAD\r\n"))
        let adminOptions = try #require(router.response("OPTIONS * HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", on: .admin))
        #expect(adminOptions.response.headText.contains("Allow: GET, HEAD, POST\r\n"))
    }

    @Test("Other paths are 404 on the main listener; healthPath answers for load balancers")
    func otherPaths() throws {
        #expect(try #require(router.response("GET / HTTP/1.1\r\nHost: example.com\r\n\r\n")).response.status == 404)
        #expect(try #require(router.response("GET /healthz HTTP/1.1\r\nHost: example.com\r\n\r\n")).response.status == 404)
        let withHealth = RouterHarness(testConfig(server: #"{"healthPath": "/lb-health"}"#))
        let health = try #require(withHealth.response("GET /lb-health HTTP/1.1\r\nHost: anything\r\n\r\n"))
        #expect(health.response.status == 200)
        #expect(health.pathClass == .health)
    }

    @Test("Admin: /healthz, /readyz (503 while draining), /metrics, POST /reload; GET /reload is 405 with Allow: POST")
    func admin() throws {
        #expect(try #require(router.response("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", on: .admin)).response.status == 200)
        let ready = try #require(router.response("GET /readyz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", on: .admin))
        #expect(ready.response.bodyText.contains("\"generation\":7"))
        var draining = router
        draining.view.isDraining = true
        #expect(try #require(draining.response("GET /readyz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", on: .admin)).response.status == 503)
        let metrics = try #require(router.response("GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", on: .admin))
        #expect(metrics.response.bodyText == "aasa_up 1\n")
        let all = try #require(router.response("GET /status HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", on: .admin))
        #expect(all.response.status == 200 && all.response.bodyText == #"{"host":"*"}"#)
        let one = try #require(router.response("GET /status/Example.COM:443 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", on: .admin))
        #expect(one.response.bodyText == #"{"host":"example.com"}"#, "the host is normalized as a Host header is")
        #expect(router.response("GET /status/other.example.net HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", on: .admin)?.response.status == 404)
        #expect(router.response("GET /statusx HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", on: .admin)?.response.status == 404)
        guard case .reload = router.route("POST /reload HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", on: .admin) else {
            Issue.record("POST /reload must ask for a reload")
            return
        }
        let getReload = try #require(router.response("GET /reload HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", on: .admin))
        #expect(getReload.response.status == 405)
        #expect(getReload.response.headText.contains("Allow: POST\r\n"))
        #expect(try #require(router.response("POST /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", on: .admin)).response.status == 405)
        #expect(
            try #require(router.response("GET /.well-known/apple-app-site-association HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", on: .admin))
                .response.status == 404
        )
        // The main listener has no admin routes.
        #expect(try #require(router.response("POST /reload HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")).response.status == 404)
    }

    @Test("The reload answer: 200 with what changed, 422 with the errors, decided by the outcome's case")
    func reloadAnswer() {
        let applied = AdminResponses.reload(
            .reloaded(
                .init(
                    generation: 3,
                    milliseconds: 12,
                    changes: SnapshotChanges(added: ["a.com"]),
                    certificatesReplaced: true,
                    needsRestart: ["server.listen"]
                )
            )
        )
        #expect(applied.status == 200)
        #expect(applied.bodyText.contains(#""result":"reloaded""#))
        #expect(applied.bodyText.contains(#""needsRestart":["server.listen"]"#))
        let refused = AdminResponses.reload(
            .rejected(
                .init(
                    generation: 2,
                    errors: [
                        Diagnostic(
                            .error,
                            "key.unknown",
                            #""reloaded" is not a key"#,
                            at: SourceLocation(offset: 30, line: 3, column: 5),
                            file: "config.json"
                        )
                    ]
                )
            )
        )
        #expect(refused.status == 422)
        #expect(refused.headText.hasPrefix("HTTP/1.1 422 Unprocessable Content\r\n"))
        #expect(refused.bodyText.contains(#""result":"rejected""#))
    }
}

@Suite("Admin listener policy (no sockets)")
struct AdminPolicyTests {
    let local = RouterHarness()

    func status(_ harness: RouterHarness, _ request: String) -> Int? {
        switch harness.route(request, on: .admin) {
        case .reload: return 0
        case .retryCertificate: return 1
        case .acmeChallenge: return nil
        case .link(let answer, _): return answer.response.status
        case .linkAPI: return 2
        case .respond(let response, _, _): return response.status
        }
    }

    @Test("The link API: only with the admin token (403 without one configured, 401 with a wrong one), JSON with a length")
    func linkAPI() {
        let token = "0123456789abcdef0123"
        let tokened = RouterHarness(adminPolicy: AdminPolicy(token: Array(token.utf8)))
        let create = "POST /v1/shortLinks HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 2\r\n"
        #expect(status(tokened, create + "Authorization: Bearer \(token)\r\n\r\n{}") == 2)
        #expect(status(tokened, create + "Authorization: Bearer \(token)x\r\n\r\n{}") == 401)
        #expect(status(tokened, create + "\r\n{}") == 401)
        #expect(status(local, create + "\r\n{}") == 403, "no token configured: no API")
        let auth = "Authorization: Bearer \(token)\r\n"
        #expect(status(tokened, "POST /v1/shortLinks HTTP/1.1\r\nHost: a\r\n\(auth)Content-Length: 2\r\n\r\n{}") == 415)
        #expect(
            status(
                tokened,
                "POST /v1/shortLinks HTTP/1.1\r\nHost: a\r\n\(auth)Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"
            )
                == 411
        )
        #expect(status(tokened, "GET /v1/shortLinks HTTP/1.1\r\nHost: a\r\n\(auth)\r\n") == 405)
        #expect(status(tokened, "GET /v1/links/go.example.com/abc HTTP/1.1\r\nHost: a\r\n\(auth)\r\n") == 2)
        #expect(status(tokened, "GET /v1/nothing HTTP/1.1\r\nHost: a\r\n\(auth)\r\n") == 404)
        #expect(status(tokened, create + auth + "Origin: https://evil.example\r\n\r\n{}") == 403, "a browser page cannot call it")
    }

    @Test("Any Origin header is refused, whatever the route (a browser page cannot drive the admin listener)")
    func origin() {
        #expect(status(local, "POST /reload HTTP/1.1\r\nHost: 127.0.0.1\r\nOrigin: http://evil.example\r\n\r\n") == 403)
        #expect(status(local, "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nOrigin: null\r\n\r\n") == 403)
        #expect(status(local, "GET /healthz HTTP/1.1\r\nHost: localhost:9090\r\nOrigin: http://localhost:9090\r\n\r\n") == 403)
    }

    @Test(
        "The console's form: posted from the listener's own origin only, form-encoded with a length; never another route, never a program"
    )
    func consoleForm() {
        let form = "POST /console/links/new HTTP/1.1\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 9\r\n"
        for (host, origin) in [
            ("127.0.0.1:9090", "http://127.0.0.1:9090"), ("LOCALHOST:9090", "http://localhost:9090"), ("[::1]:9090", "https://[::1]:9090"),
        ] {
            #expect(status(local, form + "Host: \(host)\r\nOrigin: \(origin)\r\n\r\nlink=x%3A") == 2, "\(origin) posting to \(host)")
        }
        for origin in ["http://evil.example", "http://127.0.0.1:9091", "null", "http://127.0.0.1:9090.evil.example", "http://127.0.0.1"] {
            #expect(status(local, form + "Host: 127.0.0.1:9090\r\nOrigin: \(origin)\r\n\r\nlink=x%3A") == 403, "\(origin)")
        }
        // A rebound name sends its own name as Origin and Host alike: the Host rule refuses it first.
        #expect(status(local, form + "Host: evil.example:9090\r\nOrigin: http://evil.example:9090\r\n\r\nlink=x%3A") == 403)
        #expect(status(local, form + "Host: 127.0.0.1:9090\r\n\r\nlink=x%3A") == 403, "a program uses the API")
        let sameOrigin = "Host: 127.0.0.1:9090\r\nOrigin: http://127.0.0.1:9090\r\n"
        #expect(
            status(local, "POST /console/links/new HTTP/1.1\r\nContent-Type: text/plain\r\nContent-Length: 9\r\n\(sameOrigin)\r\nlink=x%3A")
                == 415
        )
        #expect(
            status(
                local,
                "POST /console/links/new HTTP/1.1\r\nContent-Type: application/x-www-form-urlencoded\r\nTransfer-Encoding: chunked\r\n\(sameOrigin)\r\n0\r\n\r\n"
            ) == 411
        )
        // The same origin opens nothing else: not the form's page by GET, not a reload, not another console path.
        #expect(status(local, "GET /console/links/new HTTP/1.1\r\n\(sameOrigin)\r\n") == 403)
        #expect(status(local, "POST /reload HTTP/1.1\r\n\(sameOrigin)Content-Length: 0\r\n\r\n") == 403)
        #expect(status(local, "POST /console/links/newer HTTP/1.1\r\n\(sameOrigin)Content-Length: 0\r\n\r\n") == 403)
        #expect(status(local, "GET /console/links/new HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n") == 2, "the form's page")
        // With a token, the form needs it too; exposed without one, it is closed like the console.
        let token = "0123456789abcdef0123"
        let tokened = RouterHarness(adminPolicy: AdminPolicy(token: Array(token.utf8)))
        #expect(status(tokened, form + sameOrigin + "\r\nlink=x%3A") == 401)
        #expect(status(tokened, form + sameOrigin + "Authorization: Bearer \(token)\r\n\r\nlink=x%3A") == 2)
        let exposed = RouterHarness(adminPolicy: AdminPolicy(readOnly: true))
        #expect(status(exposed, form + sameOrigin + "\r\nlink=x%3A") == 403)
    }

    @Test("Without a token, Host must be localhost or an IP literal (DNS rebinding); with a token any Host is fine")
    func host() {
        for host in ["127.0.0.1:9090", "localhost", "LOCALHOST.", "[::1]:9090", "10.1.2.3:9090"] {
            #expect(status(local, "GET /healthz HTTP/1.1\r\nHost: \(host)\r\n\r\n") == 200, "\(host)")
        }
        for host in ["evil.example", "attacker.example:9090", "127.0.0.1.nip.io", "localhost.evil.example"] {
            #expect(status(local, "POST /reload HTTP/1.1\r\nHost: \(host)\r\n\r\n") == 403, "\(host)")
        }
        let tokened = RouterHarness(adminPolicy: AdminPolicy(token: Array("0123456789abcdef0123".utf8)))
        #expect(
            status(tokened, "POST /reload HTTP/1.1\r\nHost: admin.internal:9090\r\nAuthorization: Bearer 0123456789abcdef0123\r\n\r\n") == 0
        )
    }

    @Test("POST /reload refuses the content types a cross-site form can send without a preflight")
    func formTypes() {
        for type in ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", "Text/Plain;charset=utf-8"] {
            #expect(status(local, "POST /reload HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: \(type)\r\n\r\n") == 415, "\(type)")
        }
        #expect(status(local, "POST /reload HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\r\n") == 0)
        #expect(status(local, "POST /reload HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n") == 0)
    }

    @Test("A token guards /metrics, /status and POST /reload (401 with WWW-Authenticate); probes need none")
    func token() throws {
        let tokened = RouterHarness(adminPolicy: AdminPolicy(token: Array("0123456789abcdef0123".utf8)))
        #expect(status(tokened, "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n") == 401)
        #expect(status(tokened, "GET /status HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n") == 401, "/status names hosts, as /metrics does")
        #expect(status(tokened, "GET /status/example.com HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n") == 401)
        #expect(status(tokened, "POST /reload HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer wrong-token-wrong-to\r\n\r\n") == 401)
        #expect(status(tokened, "POST /reload HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Basic 0123456789abcdef0123\r\n\r\n") == 401)
        #expect(status(tokened, "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: bearer 0123456789abcdef0123\r\n\r\n") == 200)
        #expect(status(tokened, "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n") == 200)
        #expect(status(tokened, "GET /readyz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n") == 200)
        // POST /certificates/retry/HOST changes state like a reload: the same token, POST only, no form.
        #expect(status(tokened, "POST /certificates/retry/a.test HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n") == 401)
        #expect(
            status(
                tokened,
                "POST /certificates/retry/a.test HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer 0123456789abcdef0123\r\n\r\n"
            )
                == 1
        )
        #expect(status(local, "GET /certificates/retry/a.test HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n") == 405)
        #expect(status(local, "POST /certificates/retry/a.test HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: text/plain\r\n\r\n") == 415)
        #expect(status(local, "POST /certificates/retry/ HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n") == 404, "no host named")
        let response = try #require(tokened.response("GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", on: .admin))
        #expect(response.response.headText.contains("WWW-Authenticate: Bearer"))
    }

    @Test("Exposed without a token: health, readiness, metrics; the console, /status and POST /reload are refused")
    func readOnly() {
        let exposed = RouterHarness(adminPolicy: AdminPolicy(token: nil, readOnly: true))
        #expect(status(exposed, "GET /metrics HTTP/1.1\r\nHost: 10.0.0.5:9090\r\n\r\n") == 200)
        #expect(status(exposed, "GET /readyz HTTP/1.1\r\nHost: 10.0.0.5\r\n\r\n") == 200)
        #expect(status(exposed, "POST /reload HTTP/1.1\r\nHost: 10.0.0.5:9090\r\n\r\n") == 403)
        for path in ["/console", "/console/host/example.com", "/status", "/status/example.com"] {
            #expect(status(exposed, "GET \(path) HTTP/1.1\r\nHost: 10.0.0.5:9090\r\n\r\n") == 403, "\(path)")
        }
        #expect(status(exposed, "POST /certificates/retry/example.com HTTP/1.1\r\nHost: 10.0.0.5\r\n\r\n") == 403)
        // On loopback (not exposed) the same pages answer.
        #expect(status(RouterHarness(), "GET /console HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n") == 200)
        #expect(status(RouterHarness(), "GET /status HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n") == 200)
    }
}

@Suite("Reload decisions (no sockets)")
struct ReloadDecisionTests {
    @Test("Only settings a running server cannot apply need a restart; the effective settings are compared")
    func restartRequirements() {
        var running = ServerSettings()
        running.listeners = [.init(address: "127.0.0.1", port: 8080)]
        var incoming = running
        incoming.cacheControl = "max-age=60"
        incoming.healthPath = "/up"
        incoming.pollInterval = 5
        // Applied at once by a reload (Log.configure), so never also reported as needing a restart.
        incoming.logFormat = .json
        #expect(SettingsReload.apply(incoming, over: running).needsRestart.isEmpty)
        incoming.maxHeaderBytes = 1024
        incoming.admin = nil
        incoming.accessLog = false
        incoming.keepAliveTimeout = 5
        // Named by config key, as a user would look them up.
        #expect(
            SettingsReload.apply(incoming, over: running).needsRestart == [
                "server.admin", "server.limits.headerBytes", "server.timeouts.keepAlive", "server.accessLog",
            ]
        )

        // `serve --listen 127.0.0.1:0` over a config that says 0.0.0.0:8080: not a change on reload.
        var configured = ServerSettings()
        configured.listeners = [.init(address: "0.0.0.0", port: 8080)]
        let options = HTTPServer.Options(listen: [.init(address: "127.0.0.1", port: 0)], admin: .some(nil))
        let effective = options.apply(to: configured)
        #expect(SettingsReload.apply(options.apply(to: configured), over: effective).needsRestart.isEmpty)
    }

    @Test("The reload log line says what changed, or why the config was refused and what keeps serving")
    func logLines() {
        let applied = ReloadOutcome.reloaded(
            .init(
                generation: 4,
                milliseconds: 9,
                changes: SnapshotChanges(changed: ["b.com"]),
                certificatesReplaced: false,
                needsRestart: []
            )
        )
        #expect(applied.logLine(trigger: "SIGHUP") == "reloaded (SIGHUP): generation 4 in 9 ms; hosts changed: b.com")
        let refused = ReloadOutcome.rejected(
            .init(generation: 3, errors: [Diagnostic(.error, "first.rule", "first"), Diagnostic(.error, "second.rule", "second")])
        )
        #expect(refused.logLine(trigger: "file change") == "reload (file change) rejected, still serving generation 3: 2 errors")
    }
}
