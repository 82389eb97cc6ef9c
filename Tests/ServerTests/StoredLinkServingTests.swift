import Foundation
import Links
import Support
import TestSupport
import Testing

/// Short links created with `aasa-server links` while the real server runs: answered without a reload,
/// switched off and on, kept across a restart; refusals (a destination off the allowlist, a taken path)
/// said in words with exit status 1.
@Suite("Stored short links on the real binary")
struct StoredLinkServingTests {
    static let config = #"""
        {"version": 1, "apps": {"shop": {"apple": "ABCDE12345.com.example.shop", "appStoreID": 123456789}},
         "sites": [{"hosts": ["go.example.com"], "links": {"app": "shop", "openHost": "open.example.com", "allow": ["example.com"],
                    "rules": [{"/": "/p/*", "web": "https://example.com/item/{1}"}]}},
                   {"hosts": ["open.example.com"], "applinks": {"details": [{"apps": ["shop"], "components": [{"/": "/*"}]}]}}],
         "server": {"listen": ["127.0.0.1:0"], "admin": "off", "stateDirectory": "state", "reload": {"watch": false}}}
        """#

    /// Where the links are kept in a parametrized test: the SQLite file of `stateDirectory`, or a fresh
    /// database of the shared PostgreSQL cluster (`server.linkStore`).
    enum Store: String, CaseIterable, Sendable, CustomTestStringConvertible {
        case sqlite
        case postgres
        var testDescription: String { rawValue }
    }

    /// `config` with its links kept in `store`.
    static func config(_ config: String, on store: Store) throws -> String {
        guard store == .postgres else { return config }
        let cluster = try PostgresCluster.shared.get()
        let connection = try cluster.createDatabase()
        return config.replacingOccurrences(
            of: #""stateDirectory": "state""#,
            with: #""linkStore": {"postgres": "\#(connection)"}"#
        )
    }

    static func links(_ arguments: [String], _ directory: String) throws -> (status: Int32, out: String, err: String) {
        let result = try runTool([TestPaths.serverExecutable, "links"] + arguments + ["--config", directory + "/config.json"])
        return (result.status, String(decoding: result.stdout, as: UTF8.self), result.stderr)
    }

    /// Status and Location of a desktop's click.
    static func click(_ path: String, port: Int) throws -> String {
        let result = try runTool([
            "curl", "-s", "-o", "/dev/null", "-w", "%{http_code} %{redirect_url}", "-H", "Host: go.example.com", "-A",
            LinkServingTests.desktop,
            "http://127.0.0.1:\(port)\(path)",
        ])
        return String(decoding: result.stdout, as: UTF8.self).trimmingCharacters(in: .whitespaces)
    }

    @Test("Created, answered within a second, disabled (410), enabled, kept across a restart; refusals in words", arguments: Store.allCases)
    func lifecycle(store: Store) throws {
        let config = try Self.config(Self.config, on: store)
        let server = try ServerProcess(config: config)
        defer { server.stop() }
        let directory = server.directory
        #expect(try Self.click("/spring", port: server.port).hasPrefix("404"))

        let created = try Self.links(
            ["create", "--domain", "go.example.com", "--link", "https://example.com/spring", "--alias", "spring"],
            directory
        )
        #expect(created.status == 0 && created.out == "https://go.example.com/spring\n", "\(created)")
        let start = monotonicSeconds()
        #expect(waitUntil(3) { (try? Self.click("/spring", port: server.port)) == "302 https://example.com/spring" }, "\(server.stderr)")
        let seconds = monotonicSeconds() - start
        #expect(seconds < 1, "answered after \(seconds) s")
        // Each store's library is loaded by a server whose store is in it only: libpq (and the seventeen
        // libraries it needs) for PostgreSQL, libsqlite3 for SQLite.
        #expect(server.hasLoaded(library: "libpq.so") == (store == .postgres))
        #expect(server.hasLoaded(library: "libsqlite3.so") == (store == .sqlite))

        let unguessable = try Self.links(["create", "--domain", "go.example.com", "--link", "https://example.com/u", "--json"], directory)
        #expect(unguessable.status == 0)
        #expect(unguessable.out.range(of: #""suffix" ?: ?"[0-9A-Za-z]{17}""#, options: .regularExpression) != nil, "\(unguessable.out)")

        let offList = try Self.links(["create", "--domain", "go.example.com", "--link", "https://evil.example/x"], directory)
        #expect(
            offList.status == 1
                && offList.err.contains("--link (link) points at evil.example, which this site's links.allow does not list"),
            "\(offList)"
        )
        let taken = try Self.links(
            ["create", "--domain", "go.example.com", "--link", "https://example.com/other", "--alias", "spring"],
            directory
        )
        #expect(taken.status == 1 && taken.err.contains("https://go.example.com/spring already exists"), "\(taken)")
        let notLinks = try Self.links(["create", "--domain", "open.example.com", "--link", "https://example.com/x"], directory)
        #expect(notLinks.status == 1 && notLinks.err.contains("open.example.com is not a link domain of the config"), "\(notLinks)")
        #expect(try Self.click("/spring", port: server.port) == "302 https://example.com/spring", "a refused change changed nothing")

        #expect(try Self.links(["disable", "https://go.example.com/spring"], directory).status == 0)
        #expect(waitUntil(3) { (try? Self.click("/spring", port: server.port))?.hasPrefix("410") == true })
        #expect(try Self.links(["enable", "go.example.com/spring"], directory).status == 0)
        #expect(waitUntil(3) { (try? Self.click("/spring", port: server.port)) == "302 https://example.com/spring" })
        let shown = try Self.links(["show", "go.example.com/spring"], directory)
        #expect(
            shown.out.contains("link = https://example.com/spring") && shown.out.contains("disabled") && shown.out.contains("active"),
            "\(shown.out)"
        )

        // A restart loads the store before serving: the link answers at once.
        server.signal(SIGTERM)
        #expect(server.waitForExit() == 0)
        let restarted = try ServerProcess(config: config, command: ["serve", "--config", directory + "/config.json"])
        defer { restarted.stop() }
        #expect(try Self.click("/spring", port: restarted.port) == "302 https://example.com/spring", "\(restarted.stderr)")
        #expect(try Self.click("/p/9", port: restarted.port) == "302 https://example.com/item/9", "config rules answer beside stored links")

        #expect(try Self.links(["delete", "go.example.com/spring"], directory).status == 0)
        #expect(waitUntil(3) { (try? Self.click("/spring", port: restarted.port))?.hasPrefix("404") == true })
        let listed = try Self.links(["list"], directory)
        #expect(!listed.out.contains("/spring ") && listed.out.contains("https://example.com/u"), "\(listed.out)")
    }

    /// A server of `config` with the stored link /s → https://example.com/s created by the command line and
    /// answered once (a desktop's click, counted).
    static func serverWithLinkS(_ config: String, files: [String: String] = [:]) throws -> ServerProcess {
        let server = try ServerProcess(config: config, files: files)
        let created = try links(
            ["create", "--domain", "go.example.com", "--link", "https://example.com/s", "--alias", "s"],
            server.directory
        )
        guard created.status == 0, waitUntil(3, { (try? click("/s", port: server.port)) == "302 https://example.com/s" }) else {
            server.stop()
            throw TestFailure("/s was not created and answered: \(created) \(server.stderr)")
        }
        return server
    }

    static let token = "api-token-0123456789abcdef"

    /// A call of the link API: status and body.
    static func api(
        _ method: String,
        _ path: String,
        port: Int,
        body: String? = nil,
        token: String? = StoredLinkServingTests.token,
        type: String = "application/json"
    ) throws -> (status: Int, body: String) {
        var arguments = ["curl", "-s", "-X", method, "-o", "-", "-w", "\n%{http_code}", "http://127.0.0.1:\(port)\(path)"]
        if let token { arguments += ["-H", "Authorization: Bearer \(token)"] }
        if let body { arguments += ["-H", "Content-Type: \(type)", "--data-binary", body] }
        let text = String(decoding: try runTool(arguments).stdout, as: UTF8.self)
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        return (Int(lines.last ?? "") ?? 0, lines.dropLast().joined(separator: "\n"))
    }

    /// The config with the admin listener on and the API's token.
    static let apiConfig = config.replacingOccurrences(
        of: #""admin": "off""#,
        with: #""admin": "127.0.0.1:0", "adminTokenFile": "admin.token""#
    )

    @Test(
        "The API: FDL's shortLinks bodies create links that answer at once; read, disable, delete; refusals as problems",
        arguments: Store.allCases
    )
    func api(store: Store) throws {
        let config = try Self.config(Self.apiConfig, on: store)
        let server = try ServerProcess(config: config, files: ["admin.token": Self.token + "\n"])
        defer { server.stop() }
        let admin = server.adminPort
        let fdl =
            #"{"dynamicLinkInfo": {"domainUriPrefix": "https://go.example.com", "link": "https://example.com/fdl", "#
            + #""androidInfo": {"androidFallbackLink": "https://example.com/android"}}, "suffix": {"option": "SHORT"}}"#
        let created = try Self.api("POST", "/v1/shortLinks", port: admin, body: fdl)
        #expect(created.status == 200, "\(created) \(server.stderr)")
        let short = try #require(created.body.firstMatch(of: /"shortLink":"https:\/\/go\.example\.com\/([0-9A-Za-z]{4,})"/)?.1)
        #expect(created.body.contains(#""previewLink":"https://go.example.com/\#(short)?d=1""#) && created.body.contains(#""warning":[]"#))
        // The API tells the watcher: the link answers without waiting for the next poll.
        #expect(waitUntil(1) { (try? Self.click("/\(short)", port: server.port)) == "302 https://example.com/fdl" }, "\(server.stderr)")

        let long = try Self.api(
            "POST",
            "/v1/shortLinks",
            port: admin,
            body: #"{"longDynamicLink": "https://go.example.com/?link=https%3A%2F%2Fexample.com%2Flong"}"#
        )
        #expect(
            long.status == 200 && long.body.range(of: #"go\.example\.com/[0-9A-Za-z]{17}""#, options: .regularExpression) != nil,
            "\(long)"
        )

        let read = try Self.api("GET", "/v1/links/go.example.com/\(short)", port: admin)
        #expect(
            read.status == 200 && read.body.contains(#""afl":"https://example.com/android""#) && read.body.contains(#""state":"active""#),
            "\(read)"
        )
        let disabled = try Self.api("POST", "/v1/links/go.example.com/\(short)/disable", port: admin)
        #expect(disabled.status == 200 && disabled.body.contains(#""state":"disabled""#))
        #expect(waitUntil(1) { (try? Self.click("/\(short)", port: server.port))?.hasPrefix("410") == true })
        #expect(try Self.api("DELETE", "/v1/links/go.example.com/\(short)", port: admin).status == 200)
        #expect(try Self.api("GET", "/v1/links/go.example.com/\(short)", port: admin).status == 404)
        #expect(try Self.links(["list"], server.directory).out.contains("https://example.com/long"), "the CLI sees what the API made")

        // Refusals: problem documents with the status, the JSON path and why; nothing stored.
        let off = try Self.api(
            "POST",
            "/v1/shortLinks",
            port: admin,
            body: #"{"dynamicLinkInfo": {"domainUriPrefix": "https://go.example.com", "link": "https://evil.example/x"}}"#
        )
        #expect(off.status == 400 && off.body.contains(#""path":"$.dynamicLinkInfo.link""#) && off.body.contains("links.allow"), "\(off)")
        #expect(try Self.api("POST", "/v1/shortLinks", port: admin, body: fdl, token: nil).status == 401)
        #expect(try Self.api("POST", "/v1/shortLinks", port: admin, body: fdl, token: "wrong-token-0123456789").status == 401)
        #expect(try Self.api("POST", "/v1/shortLinks", port: admin, body: fdl, type: "text/plain").status == 415)
        let malformed = try Self.api("POST", "/v1/shortLinks", port: admin, body: "{'dynamicLinkInfo': 1}")
        #expect(malformed.status == 400 && malformed.body.contains("not valid JSON"), "\(malformed)")
        let sql = try Self.api(
            "POST",
            "/v1/shortLinks",
            port: admin,
            body:
                #"{"dynamicLinkInfo": {"domainUriPrefix": "https://go.example.com", "link": "https://example.com/x'); DROP TABLE links; --"}}"#
        )
        #expect(sql.status == 200 || sql.status == 400, "\(sql)")
        let huge = "{\"dynamicLinkInfo\": {\"link\": \"" + String(repeating: "a", count: 1_000_000) + "\"}}"
        try write(huge, to: server.directory + "/huge.json")
        #expect(
            try Self.api("POST", "/v1/shortLinks", port: admin, body: "@" + server.directory + "/huge.json").status == 413,
            "a 1 MB body is refused unread"
        )
        #expect(try Self.links(["list"], server.directory).out.split(separator: "\n").count == (sql.status == 200 ? 2 : 1))
    }

    @Test(
        "The API's own body: an alias (409 naming the link that has it), 201 with Location; the link token is not an admin token; creations limited per token; a domain's kill switch",
        arguments: Store.allCases
    )
    func nativeTokensAndKillSwitch(store: Store) throws {
        let linkToken = "link-api-token-fedcba9876543210"
        let config = try Self.config(Self.apiConfig, on: store).replacingOccurrences(
            of: #""adminTokenFile": "admin.token""#,
            with: #""adminTokenFile": "admin.token", "linkAPI": {"tokenFile": "link.token", "creationsPerSecond": 1}"#
        )
        let server = try ServerProcess(config: config, files: ["admin.token": Self.token + "\n", "link.token": linkToken])
        defer { server.stop() }
        let admin = server.adminPort
        func native(
            _ alias: String,
            _ link: String = "https://example.com/n",
            token: String = linkToken
        ) throws -> (status: Int, body: String) {
            try Self.api(
                "POST",
                "/v1/links",
                port: admin,
                body: #"{"domain": "go.example.com", "suffix": "\#(alias)", "parameters": {"link": "\#(link)", "st": "Spring"}}"#,
                token: token
            )
        }
        let created = try native("spring", "https://example.com/spring")
        #expect(created.status == 201, "\(created) \(server.stderr)")
        #expect(created.body.contains(#""shortLink":"https://go.example.com/spring""#) && created.body.contains(#""st":"Spring""#))
        #expect(waitUntil(1) { (try? Self.click("/spring", port: server.port)) == "302 https://example.com/spring" }, "\(server.stderr)")
        let location = try runTool([
            "curl", "-s", "-o", "/dev/null", "-w", "%{http_code} %header{location}", "-H", "Authorization: Bearer \(linkToken)", "-H",
            "Content-Type: application/json", "--data-binary",
            #"{"domain": "go.example.com", "short": true, "parameters": {"link": "https://example.com/s"}}"#,
            "http://127.0.0.1:\(admin)/v1/links",
        ])
        #expect(
            String(decoding: location.stdout, as: UTF8.self).range(
                of: #"^201 /v1/links/go\.example\.com/[0-9A-Za-z]{4}$"#,
                options: .regularExpression
            )
                != nil,
            "\(String(decoding: location.stdout, as: UTF8.self))"
        )
        let taken = try native("spring", "https://example.com/other")
        #expect(
            taken.status == 409 && taken.body.contains("https://go.example.com/spring already exists")
                && taken.body.contains("https://example.com/spring") && taken.body.contains(#""path":"$.suffix""#),
            "\(taken)"
        )
        let badAlias = try native("_x")
        #expect(badAlias.status == 400 && badAlias.body.contains("$.suffix"), "\(badAlias)")
        let unknown = try Self.api(
            "POST",
            "/v1/links",
            port: admin,
            body: #"{"domain": "go.example.com", "parameters": {"link": "https://example.com/n"}, "expiry": 3}"#,
            token: linkToken
        )
        #expect(unknown.status == 400 && unknown.body.contains(#""path":"$.expiry""#), "\(unknown)")

        // The link token opens the link API only.
        let reload = try runTool([
            "curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", "-X", "POST", "-H", "Authorization: Bearer \(linkToken)",
            "http://127.0.0.1:\(admin)/reload",
        ])
        #expect(String(decoding: reload.stdout, as: UTF8.self) == "401", "the link API token cannot reload")

        // One a second, ten at once: every creation call counts, refused ones too, so five of the ten are spent.
        var statuses: [Int] = []
        var limitedHeaders = ""
        for index in 0..<12 {
            let result = try runTool([
                "curl", "-s", "-D", "-", "-o", "/dev/null", "-H", "Authorization: Bearer \(linkToken)", "-H",
                "Content-Type: application/json", "--data-binary",
                #"{"domain": "go.example.com", "suffix": "burst\#(index)", "parameters": {"link": "https://example.com/n"}}"#,
                "http://127.0.0.1:\(admin)/v1/links",
            ])
            let headers = String(decoding: result.stdout, as: UTF8.self).lowercased()
            statuses.append(Int(headers.dropFirst("http/1.1 ".count).prefix(3)) ?? 0)
            if statuses.last == 429 {
                limitedHeaders = headers
                break
            }
        }
        #expect(statuses.count >= 6 && statuses.count <= 9 && statuses.dropLast().allSatisfy { $0 == 201 }, "\(statuses)")
        #expect(limitedHeaders.contains("retry-after: 1\r\n"), "\(limitedHeaders)")
        #expect(try native("other-token", token: Self.token).status == 201, "the admin token has a budget of its own")

        // The kill switch: every stored link of the domain answers 410, its codes too; a config rule still answers.
        let off = try Self.api("POST", "/v1/domains/go.example.com/disable", port: admin, token: linkToken)
        #expect(off.status == 200 && off.body.contains(#""disabled":true"#) && off.body.contains(#""since":"#), "\(off)")
        #expect(waitUntil(1) { (try? Self.click("/spring", port: server.port))?.hasPrefix("410") == true })
        #expect(try Self.click("/other-token", port: server.port).hasPrefix("410"))
        #expect(try Self.click("/p/1", port: server.port) == "302 https://example.com/item/1", "config rules are not stored links")
        let qr = try runTool([
            "curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", "-H", "Host: go.example.com",
            "http://127.0.0.1:\(server.port)/_/qr/spring.svg",
        ])
        #expect(String(decoding: qr.stdout, as: UTF8.self) == "410")
        #expect(try Self.links(["list", "go.example.com"], server.directory).out.contains("go.example.com is disabled since"))
        #expect(try Self.api("GET", "/v1/domains/go.example.com", port: admin, token: linkToken).body.contains(#""disabled":true"#))
        #expect(try Self.api("POST", "/v1/domains/open.example.com/disable", port: admin, token: linkToken).status == 404)
        let on = try Self.links(["enable-domain", "go.example.com"], server.directory)
        #expect(on.status == 0 && on.out == "go.example.com enabled\n", "\(on)")
        #expect(waitUntil(3) { (try? Self.click("/spring", port: server.port)) == "302 https://example.com/spring" })
        #expect(
            try Self.api("GET", "/v1/domains/go.example.com", port: admin, token: linkToken).body
                == #"{"domain":"go.example.com","disabled":false}"# + "\n"
        )
    }

    @Test(
        "Deferred deep links: Play's referrer and the App Store button carry one-time claim URLs (chromium); the app claims once; opens reported; all in the numbers",
        arguments: Store.allCases
    )
    func deferredDeepLinks(store: Store) throws {
        let config = try Self.config(Self.config, on: store).replacingOccurrences(
            of: #""apple": "ABCDE12345.com.example.shop","#,
            with:
                #""apple": "ABCDE12345.com.example.shop", "android": {"package": "com.example.shop", "sha256": ["\#(LinkServingTests.fingerprint)"]},"#
        )
        let server = try ServerProcess(config: config)
        defer { server.stop() }
        let directory = server.directory
        #expect(
            try Self.links(
                ["create", "--domain", "go.example.com", "--link", "https://example.com/spring", "--alias", "spring"],
                directory
            ).status == 0
        )
        func request(_ arguments: [String], _ path: String) throws -> String {
            let result = try runTool(
                ["curl", "-s", "-o", "-", "-w", "\n%{http_code} %{redirect_url}", "-H", "Host: go.example.com"] + arguments
                    + ["http://127.0.0.1:\(server.port)\(path)"]
            )
            return String(decoding: result.stdout, as: UTF8.self)
        }
        #expect(
            waitUntil(3) { (try? request(["-A", LinkServingTests.android], "/spring"))?.contains("302 https://play.google.com") == true }
        )

        // Android: every store redirect carries a claim URL of its own as the install referrer.
        var codes: [String] = []
        for _ in 0..<2 {
            let answer = try request(["-A", LinkServingTests.android], "/spring")
            let location = try #require(answer.split(separator: " ").last.map(String.init), "\(answer)")
            #expect(location.hasPrefix("https://play.google.com/store/apps/details?id=com.example.shop&referrer="), "\(location)")
            let referrer = String(location.split(separator: "referrer=").last ?? "").removingPercentEncoding ?? ""
            let code = try #require(
                referrer.firstMatch(of: /^https:\/\/go\.example\.com\/_\/c\/(spring\.[A-Za-z0-9_-]{32})$/)?.1,
                "\(referrer)"
            )
            codes.append(String(code))
        }
        #expect(codes[0] != codes[1], "one code per click")

        // The app claims: the deep link, once; a made-up code, never.
        let claimed = try request(["-A", "okhttp/4.12.0"], "/_/claim/\(codes[0])")
        #expect(
            claimed.hasPrefix(#"{"link":"https://example.com/spring","shortLink":"https://go.example.com/spring""#)
                && claimed.hasSuffix("\n200 "),
            "\(claimed)"
        )
        let again = try request(["-A", "okhttp/4.12.0"], "/_/claim/\(codes[0])")
        #expect(again.contains("Already claimed") && again.hasSuffix("\n410 "), "\(again)")
        var forged = Array(codes[1].utf8)
        forged[forged.count - 3] = forged[forged.count - 3] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
        #expect(try request([], "/_/claim/" + String(decoding: forged, as: UTF8.self)).hasSuffix("\n404 "))
        #expect(try request(["-X", "POST"], "/_/claim/\(codes[1])").hasSuffix("\n405 "))
        // Followed in a browser, a claim URL is the link itself, and the code stays unclaimed.
        #expect(try request([], "/_/c/\(codes[1])").hasSuffix("\n302 https://go.example.com/spring"))

        // iOS: the landing page's App Store button copies a claim URL, in a real browser, under the page's policy.
        let page = try request(["-A", LinkServingTests.iPhone], "/spring")
        #expect(page.contains("data-claim=\"/_/c/spring\"") && page.contains("script-src") == false, "the policy is a header")
        let browser = try runTool(
            [
                "flock", "-w", "180", TestPaths.chromiumLock, TestPaths.repositoryRoot + "/.ci/venv/bin/python",
                TestPaths.repositoryRoot + "/Tests/ServerTests/Fixtures/claim-browser.py",
                "\(server.port)", "/spring",
            ],
            timeout: 240
        )
        let copied = String(decoding: browser.stdout, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(browser.status == 0, "\(copied) \(browser.stderr)")
        let iosCode = String(copied.dropFirst("https://go.example.com/_/c/".count))
        #expect(try request(["-A", "Shop/1.0 CFNetwork/1494.0.7 Darwin/23.4.0"], "/_/claim/\(iosCode)").hasSuffix("\n200 "), "\(copied)")

        // The app reports opens; a link this host does not have, or another event, is refused.
        #expect(
            try request(["-X", "POST"], "/_/open?link=https%3A%2F%2Fgo.example.com%2Fspring&event=first-open&platform=ios").hasSuffix(
                "\n204 "
            )
        )
        #expect(try request(["-X", "POST", "-A", "okhttp/4.12.0"], "/_/open?link=spring&event=re-open").hasSuffix("\n204 "))
        #expect(try request(["-X", "POST"], "/_/open?link=nothing&event=first-open").hasSuffix("\n404 "))
        #expect(try request(["-X", "POST"], "/_/open?link=spring&event=install").hasSuffix("\n400 "))
        #expect(try request([], "/_/open?link=spring&event=first-open").hasSuffix("\n405 "))

        server.signal(SIGTERM)
        #expect(server.waitForExit() == 0, "the opens are written when the server stops")
        let stats = try Self.links(["stats", "go.example.com/spring"], directory)
        #expect(stats.out.contains("installs (claims): 2 (android 1, ios 1)"), "\(stats.out)")
        #expect(stats.out.contains("first opens: 1 (ios 1)") && stats.out.contains("re-opens: 1 (android 1)"), "\(stats.out)")
    }

    @Test("server.clickRetentionDays: the server deletes older days' counts when it starts; the kept days stay")
    func retention() throws {
        let config = Self.config.replacingOccurrences(
            of: #""stateDirectory": "state""#,
            with: #""stateDirectory": "state", "clickRetentionDays": 30"#
        )
        try withTemporaryDirectory { directory in
            try write(config, to: directory + "/config.json")
            #expect(
                try Self.links(["create", "--domain", "go.example.com", "--link", "https://example.com/s", "--alias", "s"], directory)
                    .status == 0
            )
            let database = directory + "/state/links.sqlite"
            let today = String(CivilTime(unixSeconds: Int(Date().timeIntervalSince1970)).isoSecond.prefix(10))
            let insert = try runTool([
                "sqlite3", database,
                "INSERT INTO link_clicks (link, day, visitor, outcome, head, count) SELECT id, '2020-01-01', 'iphone', 'landing', 0, 7 FROM links; "
                    + "INSERT INTO link_clicks (link, day, visitor, outcome, head, count) SELECT id, '\(today)', 'desktop', 'web', 0, 3 FROM links;",
            ])
            #expect(insert.status == 0, "\(insert.stderr)")
            let server = try ServerProcess(config: config, command: ["serve", "--config", directory + "/config.json"])
            defer { server.stop() }
            func days() throws -> String {
                String(decoding: try runTool(["sqlite3", database, "SELECT group_concat(day) FROM link_clicks"]).stdout, as: UTF8.self)
                    .trimmingCharacters(in: .whitespacesAndNewlines)
            }
            #expect(waitUntil(5) { (try? days()) == today }, "\((try? days()) ?? "") \(server.stderr)")
            #expect(server.stderr.contains("counts before") && server.stderr.contains("server.clickRetentionDays 30"), "\(server.stderr)")
        }
    }

    @Test(
        "Update, from the CLI and the API (a JSON merge patch): checked as a creation, answered at once, in the history",
        arguments: Store.allCases
    )
    func update(store: Store) throws {
        let server = try ServerProcess(config: Self.config(Self.apiConfig, on: store), files: ["admin.token": Self.token + "\n"])
        defer { server.stop() }
        let directory = server.directory
        #expect(
            try Self.links(["create", "--domain", "go.example.com", "--link", "https://example.com/a", "--alias", "u"], directory).status
                == 0
        )
        let updated = try Self.links(["update", "go.example.com/u", "--web", "https://example.com/desk", "--title", "Spring"], directory)
        #expect(updated.status == 0 && updated.out == "https://go.example.com/u updated\n", "\(updated)")
        #expect(waitUntil(3) { (try? Self.click("/u", port: server.port)) == "302 https://example.com/desk" }, "\(server.stderr)")
        let off = try Self.links(["update", "go.example.com/u", "--web", "https://evil.example/"], directory)
        #expect(off.status == 1 && off.err.contains("--web (ofl) points at evil.example"), "\(off)")
        #expect(try Self.links(["update", "go.example.com/u"], directory).status == 2, "nothing to change")
        #expect(try Self.links(["update", "go.example.com/u", "--remove", "link"], directory).status == 1)
        #expect(try Self.links(["update", "go.example.com/u", "--remove", "ofl"], directory).status == 0)
        #expect(waitUntil(3) { (try? Self.click("/u", port: server.port)) == "302 https://example.com/a" })

        let admin = server.adminPort
        let patched = try Self.api(
            "PATCH",
            "/v1/links/go.example.com/u",
            port: admin,
            body: #"{"parameters": {"ofl": "https://example.com/api", "st": null}}"#
        )
        #expect(
            patched.status == 200 && patched.body.contains(#""ofl":"https://example.com/api""#) && !patched.body.contains(#""st""#),
            "\(patched)"
        )
        #expect(waitUntil(1) { (try? Self.click("/u", port: server.port)) == "302 https://example.com/api" })
        let refused = try Self.api(
            "PATCH",
            "/v1/links/go.example.com/u",
            port: admin,
            body: #"{"parameters": {"ifl": "https://evil.example/"}}"#
        )
        #expect(refused.status == 400 && refused.body.contains("links.allow"), "\(refused)")
        #expect(try Self.api("PATCH", "/v1/links/go.example.com/u", port: admin, body: #"{"parameters": {"link": null}}"#).status == 400)
        #expect(try Self.api("PATCH", "/v1/links/go.example.com/none", port: admin, body: #"{"parameters": {}}"#).status == 404)
        #expect(try Self.api("PATCH", "/v1/links/go.example.com/u", port: admin, body: #"{"parameters": {}}"#, token: nil).status == 401)
        let history = try Self.links(["show", "go.example.com/u"], directory).out
        #expect(
            history.components(separatedBy: "updated").count - 1 == 3 && history.contains("ofl = https://example.com/api"),
            "\(history)"
        )
    }

    @Test(
        "Import: Takeout's CSV (5,000 links) and exported JSON lines; dry run writes nothing, a second run changes nothing",
        arguments: Store.allCases
    )
    func importAndExport(store: Store) throws {
        try withTemporaryDirectory { directory in
            try write(Self.config(Self.config, on: store), to: directory + "/config.json")
            var lines = [TakeoutCSV.columns.map { $0 == "shortLink" ? "Short link" : "(\($0))" }.joined(separator: ",")]
            func row(_ shortLink: String, _ link: String, archived: Bool = false) -> String {
                TakeoutCSV.columns.map { column in
                    column == "shortLink" ? shortLink : column == "link" ? link : column == "archived" ? (archived ? "true" : "false") : ""
                }.joined(separator: ",")
            }
            for index in 0..<5_000 { lines.append(row("https://go.example.com/m\(index)", "https://example.com/p/\(index)")) }
            lines.append(row("https://go.example.com/gone", "https://example.com/gone", archived: true))
            lines.append(row("https://go.example.com/evil", "https://evil.example/"))
            try write(lines.joined(separator: "\r\n") + "\r\n", to: directory + "/takeout.csv")
            let takeout = ["import", "--takeout", directory + "/takeout.csv"]

            let dry = try Self.links(takeout + ["--dry-run"], directory)
            #expect(
                dry.status == 1 && dry.out.hasSuffix("would import 5000, unchanged 0, skipped 2 (dry run: nothing written)\n"),
                "\(dry)"
            )
            #expect(dry.out.contains("line 5002: skipped https://go.example.com/gone: archived in Firebase"))
            #expect(dry.out.contains("line 5003: skipped https://go.example.com/evil: link points at evil.example"))
            #expect(try Self.links(["list"], directory).out == "no short links\n")
            let first = try Self.links(takeout, directory)
            #expect(first.out.hasSuffix("imported 5000, unchanged 0, skipped 2\n"), "\(first)")
            let again = try Self.links(takeout + ["--json"], directory)
            #expect(
                again.out.replacingOccurrences(of: " ", with: "").contains(#""imported":0,"#)
                    && again.out.replacingOccurrences(of: " ", with: "").contains(#""unchanged":5000,"#),
                "\(again.out)"
            )

            // A link that differs is reported, never replaced.
            _ = try Self.links(["delete", "go.example.com/m7"], directory)
            _ = try Self.links(["create", "--domain", "go.example.com", "--alias", "m7", "--link", "https://example.com/mine"], directory)
            let differs = try Self.links(takeout, directory)
            #expect(
                differs.out.contains("line 9: skipped https://go.example.com/m7: already exists with other parameters; not replaced"),
                "\(differs.out)"
            )
            #expect(try Self.links(["show", "go.example.com/m7"], directory).out.contains("link = https://example.com/mine"))

            // Export, then import into an empty store: the same links.
            let exported = try Self.links(["export"], directory)
            #expect(exported.out.split(separator: "\n").count == 5_000)
            try write(exported.out, to: directory + "/links.jsonl")
            try write(
                Self.config.replacingOccurrences(of: #""stateDirectory": "state""#, with: #""stateDirectory": "moved""#),
                to: directory + "/moved.json"
            )
            let moved = try runTool([
                TestPaths.serverExecutable, "links", "import", directory + "/links.jsonl", "--config", directory + "/moved.json",
            ])
            #expect(String(decoding: moved.stdout, as: UTF8.self) == "imported 5000, unchanged 0, skipped 0\n" && moved.status == 0)
            let listed = try runTool([TestPaths.serverExecutable, "links", "export", "--config", directory + "/moved.json"])
            #expect(String(decoding: listed.stdout, as: UTF8.self) == exported.out, "the moved store holds the same links, times included")
        }
    }

    @Test(
        "Clicks: counted per class by the server, crawlers and HEAD apart, written on shutdown, shown by `links stats` and FDL's linkStats",
        arguments: Store.allCases
    )
    func clicks(store: Store) throws {
        let config = try Self.config(Self.apiConfig, on: store)
        // Exactly one desktop click answers the wait (those before the link existed were 404s, not clicks).
        let server = try Self.serverWithLinkS(config, files: ["admin.token": Self.token + "\n"])
        defer { server.stop() }
        let directory = server.directory
        func get(_ agent: String, times: Int, head: Bool = false) throws {
            for _ in 0..<times {
                _ = try runTool(
                    ["curl", "-s", "-o", "/dev/null"] + (head ? ["-I"] : []) + [
                        "-H", "Host: go.example.com", "-A", agent, "http://127.0.0.1:\(server.port)/s",
                    ]
                )
            }
        }
        try get(LinkServingTests.desktop, times: 3)
        try get(LinkServingTests.iPhone, times: 2)
        try get(LinkServingTests.slack, times: 1)
        try get(LinkServingTests.desktop, times: 1, head: true)
        server.signal(SIGTERM)
        #expect(server.waitForExit() == 0)

        let stats = try Self.links(["stats", "go.example.com/s", "--days", "1"], directory)
        let lines = stats.out.split(separator: "\n").map { $0.split(separator: " ").joined(separator: " ") }
        #expect(lines.count == 4 && lines[1] == "day iphone ipad android desktop in-app crawler HEAD", "\(stats.out)")
        #expect(lines.last == "total 2 0 0 4 0 1 1", "\(stats.out)")

        let restarted = try ServerProcess(config: config, command: ["serve", "--config", directory + "/config.json"])
        defer { restarted.stop() }
        let fdl = try Self.api("GET", "/v1/https%3A%2F%2Fgo.example.com%2Fs/linkStats?durationDays=1", port: restarted.adminPort)
        #expect(
            fdl.body.trimmingCharacters(in: .whitespacesAndNewlines)
                == #"{"linkEventStats":[{"platform":"IOS","count":"2","event":"CLICK"},"#
                + #"{"platform":"DESKTOP","count":"4","event":"CLICK"},{"platform":"DESKTOP","count":"4","event":"REDIRECT"}]}"#,
            "\(fdl)"
        )

        // The console's page of the link: the same numbers, drawn and tabled, under the console's policy.
        let page = try runTool([
            "curl", "-s", "-D", "-", "-H", "Authorization: Bearer \(Self.token)",
            "http://127.0.0.1:\(restarted.adminPort)/console/link/go.example.com/s?days=7",
        ])
        let text = String(decoding: page.stdout, as: UTF8.self)
        #expect(text.hasPrefix("HTTP/1.1 200") && text.contains("Content-Security-Policy: default-src 'none'"), "\(text.prefix(600))")
        #expect(text.contains("<h1>https://go.example.com/s</h1>") && text.contains("7 clicks in the last 7 days"), "\(text)")
        #expect(
            text.contains(#"<rect class="iphone""#) && text.contains(#"<rect class="desktop""#) && text.contains(#"<rect class="crawler""#)
        )
        #expect(
            text.contains("<tr class=\"total\"><td>total</td><td>2</td><td>0</td><td>0</td><td>4</td><td>0</td><td>1</td><td>1</td></tr>")
        )
        #expect(text.contains("Z created</li>") && text.contains("<td>link</td><td>https://example.com/s</td>"))
        let missing = try runTool([
            "curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", "-H", "Authorization: Bearer \(Self.token)",
            "http://127.0.0.1:\(restarted.adminPort)/console/link/go.example.com/nothing",
        ])
        #expect(String(decoding: missing.stdout, as: UTF8.self) == "404")
        let anonymous = try runTool([
            "curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", "http://127.0.0.1:\(restarted.adminPort)/console/link/go.example.com/s",
        ])
        #expect(String(decoding: anonymous.stdout, as: UTF8.self) == "401", "the page needs the admin token")
    }

    @Test("The console's page of a stored link in chromium: no console error or CSP violation, the bars drawn, the totals the counts")
    func consolePageInBrowser() throws {
        // The admin listener on loopback with no token: the console is readable there (docs/serving.md).
        let config = Self.config.replacingOccurrences(of: #""admin": "off""#, with: #""admin": "127.0.0.1:0""#)
        let server = try Self.serverWithLinkS(config)
        defer { server.stop() }
        let directory = server.directory
        for _ in 0..<2 { _ = try Self.click("/s", port: server.port) }
        for _ in 0..<2 {
            _ = try runTool([
                "curl", "-s", "-o", "/dev/null", "-H", "Host: go.example.com", "-A", LinkServingTests.iPhone,
                "http://127.0.0.1:\(server.port)/s",
            ])
        }
        server.signal(SIGTERM)
        #expect(server.waitForExit() == 0)
        let restarted = try ServerProcess(config: config, command: ["serve", "--config", directory + "/config.json"])
        defer { restarted.stop() }
        let browser = try runBrowserScript(
            "Tests/ServerTests/Fixtures/link-console-browser.py",
            [
                "http://127.0.0.1:\(restarted.adminPort)/console/link/go.example.com/s",
                try TestPaths.screenshots("console-screenshots") + "/console-link.png", "2 0 0 3 0 0 0",
            ]
        )
        #expect(browser.passed, "\(browser.report)")
    }

    @Test("validate names a stored link that a config rule naming its path hides, at the rule; a wildcard rule hides none")
    func shadowed() throws {
        try withTemporaryDirectory { directory in
            let config = Self.config.replacingOccurrences(
                of: #"[{"/": "/p/*", "web": "https://example.com/item/{1}"}]"#,
                with: #"[{"/": "/fixed", "web": "https://example.com/config"}, {"/": "/*", "web": "https://example.com{path}"}]"#
            )
            try write(config, to: directory + "/config.json")
            let clean = try runTool([TestPaths.serverExecutable, "validate", "--config", directory + "/config.json", "--strict"])
            #expect(clean.status == 0, "\(clean.stderr)")
            for alias in ["fixed", "other"] {
                let created = try Self.links(
                    ["create", "--domain", "go.example.com", "--link", "https://example.com/\(alias)", "--alias", alias],
                    directory
                )
                #expect(created.status == 0)
            }
            let result = try runTool([TestPaths.serverExecutable, "validate", "--config", directory + "/config.json"])
            let output = String(decoding: result.stdout, as: UTF8.self) + result.stderr
            #expect(result.status == 0, "a warning: \(output)")
            #expect(output.contains("links.stored-shadowed"), "\(output)")
            #expect(output.contains("https://go.example.com/fixed is also a short link"), "\(output)")
            #expect(output.contains("config.json:3:"), "at the rule's line: \(output)")
            #expect(!output.contains("https://go.example.com/other is also"), "a wildcard rule hides nothing")
            let strict = try runTool([TestPaths.serverExecutable, "validate", "--config", directory + "/config.json", "--strict"])
            #expect(strict.status == 1)
        }
    }

    @Test("Without server.stateDirectory the command says where links are kept, and exits 2")
    func needsStateDirectory() throws {
        try withTemporaryDirectory { directory in
            try write(Self.config.replacingOccurrences(of: #", "stateDirectory": "state""#, with: ""), to: directory + "/config.json")
            let result = try Self.links(["list"], directory)
            #expect(result.status == 2 && result.err.contains("server.stateDirectory"), "\(result)")
            let usage = try Self.links(["rename"], directory)
            #expect(usage.status == 2)
        }
    }

    @Test(
        "QR codes: /_/qr/SUFFIX.png and .svg for an active link only, decoded by zbarimg; the CLI writes the same PNG, never over a file",
        arguments: Store.allCases
    )
    func qrCodes(store: Store) throws {
        let server = try ServerProcess(config: Self.config(Self.config, on: store))
        defer { server.stop() }
        let directory = server.directory
        #expect(
            try Self.links(["create", "--domain", "go.example.com", "--link", "https://example.com/s", "--alias", "spring"], directory)
                .status == 0
        )
        func fetch(_ path: String, method: String = "GET", to file: String = "/dev/null") throws -> String {
            let result = try runTool([
                "curl", "-s", "-X", method, "-o", file, "-w", "%{http_code} %{content_type}", "-H", "Host: go.example.com",
                "http://127.0.0.1:\(server.port)\(path)",
            ])
            return String(decoding: result.stdout, as: UTF8.self)
        }
        func decode(_ file: String) throws -> String {
            let result = try runTool(["zbarimg", "--quiet", "--raw", "-Sqrcode.enable", file])
            return String(decoding: result.stdout, as: UTF8.self).trimmingCharacters(in: .newlines)
        }
        #expect(waitUntil(3) { (try? fetch("/_/qr/spring.png")) == "200 image/png" }, "\(server.stderr)")
        #expect(try fetch("/_/qr/spring.png", to: directory + "/served.png") == "200 image/png")
        #expect(try decode(directory + "/served.png") == "https://go.example.com/spring")
        #expect(try fetch("/_/qr/spring.svg", to: directory + "/served.svg") == "200 image/svg+xml")
        let svg = try String(contentsOfFile: directory + "/served.svg", encoding: .utf8)
        #expect(svg.hasPrefix("<svg xmlns=\"http://www.w3.org/2000/svg\"") && svg.contains("<path"))
        let headers = try runTool(["curl", "-sI", "-H", "Host: go.example.com", "http://127.0.0.1:\(server.port)/_/qr/spring.svg"])
        let headerText = String(decoding: headers.stdout, as: UTF8.self).lowercased()
        #expect(
            headerText.contains("cache-control: public, max-age=86400")
                && headerText.contains("content-security-policy: default-src 'none'")
        )

        #expect(try fetch("/_/qr/nothing.png").hasPrefix("404"), "no link, no code: the path draws no arbitrary text")
        #expect(try fetch("/_/qr/spring.gif").hasPrefix("404"))
        #expect(try fetch("/_/qr/spring.png", method: "POST").hasPrefix("405"))

        let written = try Self.links(["qr", "https://go.example.com/spring", "--output", directory + "/cli.png"], directory)
        #expect(written.status == 0, "\(written)")
        #expect(try decode(directory + "/cli.png") == "https://go.example.com/spring")
        #expect(
            FileManager.default.contents(atPath: directory + "/cli.png") == FileManager.default.contents(atPath: directory + "/served.png"),
            "the CLI's PNG is the server's"
        )
        let again = try Self.links(["qr", "go.example.com/spring", "--output", directory + "/cli.png"], directory)
        #expect(again.status == 1 && again.err.contains("exists"), "\(again)")
        let text = try Self.links(["qr", "go.example.com/spring"], directory)
        #expect(try PrintedQR.decode(PrintedQR.modules(fromText: text.out), in: directory) == "https://go.example.com/spring")
        #expect(try Self.links(["qr", "go.example.com/nothing"], directory).status == 1)
        #expect(try Self.links(["qr", "go.example.com/spring", "--output", directory + "/code.gif"], directory).status == 2)

        #expect(try Self.links(["disable", "go.example.com/spring"], directory).status == 0)
        #expect(waitUntil(3) { (try? fetch("/_/qr/spring.png"))?.hasPrefix("410") == true }, "a disabled link has no code")
    }
}
