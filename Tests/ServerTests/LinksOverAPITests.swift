import Foundation
import TestSupport
import Testing

/// `aasa-server links --server URL`: every action but import through a running server's link API, printing
/// exactly what the same action prints from the database; the API's pages, history and counts; refusals
/// said in words with the right exit status.
@Suite("links --server: the command line through a server's API")
struct LinksOverAPITests {
    typealias Result = (status: Int32, out: String, err: String)

    static func remote(_ arguments: [String], _ server: ServerProcess, token: String? = "admin.token") throws -> Result {
        var command = [TestPaths.serverExecutable, "links"] + arguments + ["--server", "http://127.0.0.1:\(server.adminPort)"]
        if let token { command += ["--token-file", server.directory + "/" + token] }
        let result = try runTool(command)
        return (result.status, String(decoding: result.stdout, as: UTF8.self), result.stderr)
    }

    static func local(_ arguments: [String], _ server: ServerProcess) throws -> Result {
        try StoredLinkServingTests.links(arguments, server.directory)
    }

    @Test(
        "create, list, show, update, stats, disable, enable, qr, export, the domain switch and delete print what the database side prints"
    )
    func sameAsLocal() throws {
        let server = try ServerProcess(
            config: StoredLinkServingTests.apiConfig,
            files: ["admin.token": StoredLinkServingTests.token + "\n"]
        )
        defer { server.stop() }
        let created = try Self.remote(
            ["create", "--domain", "go.example.com", "--link", "https://example.com/spring", "--alias", "spring", "--title", "Spring"],
            server
        )
        #expect(created.status == 0 && created.out == "https://go.example.com/spring\n", "\(created)")
        let short = try Self.remote(["create", "--domain", "go.example.com", "--link", "https://example.com/s", "--short"], server)
        #expect(short.status == 0 && short.out.firstMatch(of: /^https:\/\/go\.example\.com\/[0-9A-Za-z]{4}\n$/) != nil, "\(short)")
        #expect(try StoredLinkServingTests.click("/spring", port: server.port) == "302 https://example.com/spring")

        let updated = try Self.remote(["update", "go.example.com/spring", "--web", "https://example.com/web", "--remove", "st"], server)
        #expect(updated.status == 0 && updated.out == "https://go.example.com/spring updated\n", "\(updated)")
        #expect(waitUntil(8) { (try? Self.local(["stats", "go.example.com/spring"], server))?.out.contains("total") == true })
        for arguments in [
            ["list"], ["list", "--json"], ["list", "go.example.com"], ["show", "https://go.example.com/spring"],
            ["show", "go.example.com/spring", "--json"], ["stats", "go.example.com/spring", "--days", "3"],
            ["stats", "go.example.com/spring", "--json"], ["export"], ["qr", "go.example.com/spring"],
        ] {
            let remote = try Self.remote(arguments, server)
            let local = try Self.local(arguments, server)
            #expect(remote.status == 0 && remote.out == local.out, "links \(arguments.joined(separator: " ")): \(remote) against \(local)")
        }
        let shown = try Self.remote(["show", "go.example.com/spring"], server).out
        #expect(shown.contains("  ofl = https://example.com/web\n") && !shown.contains("st = Spring") && shown.contains("history:\n"))

        for (action, printed) in [
            ("disable", "https://go.example.com/spring disabled (410 Gone)\n"), ("enable", "https://go.example.com/spring enabled\n"),
        ] {
            let changed = try Self.remote([action, "go.example.com/spring"], server)
            #expect(changed.status == 0 && changed.out == printed, "\(changed)")
        }
        let off = try Self.remote(["disable-domain", "go.example.com"], server)
        #expect(off.status == 0 && off.out == "go.example.com disabled: every stored link on it answers 410 Gone\n", "\(off)")
        #expect(waitUntil(2) { (try? StoredLinkServingTests.click("/spring", port: server.port))?.hasPrefix("410") == true })
        let listedOff = try Self.remote(["list"], server)
        #expect(listedOff.out == (try Self.local(["list"], server)).out && listedOff.out.contains("go.example.com is disabled since "))
        let on = try Self.remote(["enable-domain", "go.example.com", "--json"], server)
        #expect(on.status == 0 && on.out == #"{"domain":"go.example.com","disabled":false}"# + "\n", "\(on)")

        let image = server.directory + "/spring.png"
        let drawn = try Self.remote(["qr", "go.example.com/spring", "--output", image], server)
        #expect(drawn.status == 0 && FileManager.default.fileExists(atPath: image), "\(drawn)")
        let decoded = try runTool(["zbarimg", "--quiet", "--raw", "-Sqrcode.enable", image])
        #expect(String(decoding: decoded.stdout, as: UTF8.self) == "https://go.example.com/spring\n")

        let deleted = try Self.remote(["delete", "go.example.com/spring"], server)
        #expect(deleted.status == 0 && deleted.out == "https://go.example.com/spring deleted\n", "\(deleted)")
        #expect(waitUntil(2) { (try? StoredLinkServingTests.click("/spring", port: server.port))?.hasPrefix("404") == true })
    }

    @Test("refusals: off the allowlist and a taken alias are 1 with the server's words; no token, a wrong one, no server and import are 2")
    func refusals() throws {
        let server = try ServerProcess(
            config: StoredLinkServingTests.apiConfig,
            files: ["admin.token": StoredLinkServingTests.token + "\n", "wrong.token": "not-the-token\n"]
        )
        defer { server.stop() }
        let off = try Self.remote(["create", "--domain", "go.example.com", "--link", "https://evil.example/x"], server)
        #expect(
            off.status == 1
                && off.err == "error: POST http://127.0.0.1:\(server.adminPort)/v1/links answered 400 Link refused: link points at "
                    + "evil.example, which this site's links.allow does not list (at $.parameters.link)\n",
            "\(off)"
        )
        #expect(
            try Self.remote(["create", "--domain", "go.example.com", "--link", "https://example.com/a", "--alias", "taken"], server).status
                == 0
        )
        let taken = try Self.remote(
            ["create", "--domain", "go.example.com", "--link", "https://example.com/b", "--alias", "taken"],
            server
        )
        #expect(taken.status == 1 && taken.err.contains("409") && taken.err.contains("go.example.com/taken"), "\(taken)")
        let missing = try Self.remote(["show", "go.example.com/nothing"], server)
        #expect(missing.status == 1 && missing.err.contains("404 No such link"), "\(missing)")
        let noToken = try Self.remote(["list"], server, token: nil)
        #expect(noToken.status == 2 && noToken.err.contains("401"), "\(noToken)")
        let wrongToken = try Self.remote(["list"], server, token: "wrong.token")
        #expect(wrongToken.status == 2 && wrongToken.err.contains("401"), "\(wrongToken)")
        let port = try freeLoopbackPort()
        let nobody = try runTool([TestPaths.serverExecutable, "links", "list", "--server", "http://127.0.0.1:\(port)"])
        #expect(nobody.status == 2 && nobody.stderr.contains("cannot connect"), "\(nobody.stderr)")
        let importing = try Self.remote(["import", "links.jsonl"], server)
        #expect(importing.status == 2 && importing.err.contains("import writes to the link store itself"), "\(importing)")
        let both = try runTool([
            TestPaths.serverExecutable, "links", "list", "--server", "http://127.0.0.1:1", "--config", server.directory + "/config.json",
        ])
        #expect(both.status == 2 && both.stderr.contains("give one"))
    }

    @Test("GET /v1/links pages through the links in order; history and clicks answer per link; bad queries are 400 problems")
    func pages() throws {
        let server = try ServerProcess(
            config: StoredLinkServingTests.apiConfig,
            files: ["admin.token": StoredLinkServingTests.token + "\n"]
        )
        defer { server.stop() }
        for name in ["c", "a", "e", "b", "d"] {
            #expect(
                try StoredLinkServingTests.links(
                    ["create", "--domain", "go.example.com", "--link", "https://example.com/\(name)", "--alias", "link-\(name)"],
                    server.directory
                ).status == 0
            )
        }
        var seen: [String] = []
        var after = ""
        var pages = 0
        repeat {
            let page = try StoredLinkServingTests.api(
                "GET",
                "/v1/links?limit=2\(after.isEmpty ? "" : "&after=" + after)",
                port: server.adminPort
            )
            #expect(page.status == 200, "\(page)")
            let object = try #require(try JSONSerialization.jsonObject(with: Data(page.body.utf8)) as? [String: Any])
            seen += (object["links"] as? [[String: Any]] ?? []).compactMap { $0["suffix"] as? String }
            after = object["next"] as? String ?? ""
            pages += 1
        } while !after.isEmpty && pages < 10
        #expect(seen == ["link-a", "link-b", "link-c", "link-d", "link-e"] && pages == 3, "\(seen) in \(pages) pages")

        let history = try StoredLinkServingTests.api("GET", "/v1/links/go.example.com/link-a/history", port: server.adminPort)
        #expect(history.status == 200 && history.body.contains(#""change":"created""#), "\(history)")
        let clicks = try StoredLinkServingTests.api("GET", "/v1/links/go.example.com/link-a/clicks?days=2", port: server.adminPort)
        #expect(clicks.status == 200 && clicks.body == #"{"shortLink":"https://go.example.com/link-a","clicks":[]}"# + "\n", "\(clicks)")
        for (path, title) in [
            ("/v1/links?limit=0", "Invalid limit"), ("/v1/links?after=nothing", "Invalid after"), ("/v1/links?sort=up", "Invalid query"),
            ("/v1/links/go.example.com/link-a/clicks", "Invalid days"),
        ] {
            let refused = try StoredLinkServingTests.api("GET", path, port: server.adminPort)
            #expect(refused.status == 400 && refused.body.contains(#""title":"\#(title)""#), "\(path): \(refused)")
        }
        let posted = try StoredLinkServingTests.api("PUT", "/v1/links", port: server.adminPort)
        #expect(posted.status == 405 && posted.body.contains("GET and POST"), "\(posted)")
    }
}
