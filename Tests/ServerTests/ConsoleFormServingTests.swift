import Foundation
import TestSupport
import Testing

/// The console's form for a new short link on the real binary: in chromium as a person uses it, and with
/// curl as an attacker would — a page elsewhere (another Origin) and a program without the token create
/// nothing.
@Suite("Console: creating a short link with the form")
struct ConsoleFormServingTests {
    static let apiToken = "console-api-token-0123456789"

    /// The admin listener on loopback, no admin token (the console is readable there), a link API token.
    static let config = StoredLinkServingTests.config.replacingOccurrences(
        of: #""admin": "off""#,
        with: #""admin": "127.0.0.1:0", "linkAPI": {"tokenFile": "api.token"}"#
    )

    static func post(_ server: ServerProcess, origin: String?, fields: [String]) throws -> (status: Int, location: String, body: String) {
        var arguments = ["curl", "-s", "-o", "-", "-w", "\n%{http_code} %{redirect_url}", "-X", "POST"]
        if let origin { arguments += ["-H", "Origin: \(origin)"] }
        for field in fields { arguments += ["--data-urlencode", field] }
        arguments.append("http://127.0.0.1:\(server.adminPort)/console/links/new")
        let text = String(decoding: try runTool(arguments).stdout, as: UTF8.self)
        let last = text.split(separator: "\n", omittingEmptySubsequences: false).last ?? ""
        let parts = last.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: false)
        return (Int(parts.first ?? "") ?? 0, parts.count > 1 ? String(parts[1]) : "", String(text.dropLast(last.count + 1)))
    }

    @Test("In chromium: a refusal comes back in words with the field marked and the values kept; a good link lands on its page and answers")
    func inBrowser() throws {
        let server = try ServerProcess(config: Self.config, files: ["api.token": Self.apiToken + "\n"])
        defer { server.stop() }
        let browser = try runBrowserScript(
            "Tests/ServerTests/Fixtures/link-form-browser.py",
            [
                "http://127.0.0.1:\(server.adminPort)/console", Self.apiToken,
                try TestPaths.screenshots("console-screenshots") + "/console-link-form.png",
            ]
        )
        #expect(browser.passed, "\(browser.report)")
        #expect(
            waitUntil(2) {
                (try? StoredLinkServingTests.click("/from-console", port: server.port)) == "302 https://example.com/from-console"
            }
        )
        let listed = try StoredLinkServingTests.links(["list"], server.directory)
        #expect(listed.out == "https://go.example.com/from-console  active  https://example.com/from-console\n", "\(listed)")
        let shown = try StoredLinkServingTests.links(["show", "go.example.com/from-console"], server.directory)
        #expect(shown.out.contains("  st = Made in the console\n"), "\(shown)")
    }

    @Test(
        "With curl: another Origin, no Origin, a wrong token or no token at all create nothing; the right one answers 303 to the link's page"
    )
    func refusals() throws {
        let server = try ServerProcess(config: Self.config, files: ["api.token": Self.apiToken + "\n"])
        defer { server.stop() }
        let own = "http://127.0.0.1:\(server.adminPort)"
        let fields = ["domain=go.example.com", "link=https://example.com/c", "alias=curl"]
        let elsewhere = try Self.post(server, origin: "http://evil.example", fields: fields + ["token=\(Self.apiToken)"])
        #expect(elsewhere.status == 403 && elsewhere.body.contains("cross-origin requests are refused"), "\(elsewhere)")
        let program = try Self.post(server, origin: nil, fields: fields + ["token=\(Self.apiToken)"])
        #expect(program.status == 403 && program.body.contains("programs create links with the link API"), "\(program)")
        let wrong = try Self.post(server, origin: own, fields: fields + ["token=wrong-7Qz"])
        #expect(wrong.status == 401 && wrong.body.contains("Not created: that is not the link API&#39;s token"), "\(wrong)")
        #expect(!wrong.body.contains("wrong-7Qz"), "the typed token is not sent back")
        let none = try Self.post(server, origin: own, fields: fields)
        #expect(none.status == 401 && none.body.contains("give the link API&#39;s token"), "\(none)")
        #expect(try StoredLinkServingTests.links(["list"], server.directory).out == "no short links\n")

        let created = try Self.post(server, origin: own, fields: fields + ["token=\(Self.apiToken)", "st=<b>bold</b>"])
        #expect(created.status == 303 && created.location == own + "/console/link/go.example.com/curl", "\(created)")
        #expect(waitUntil(2) { (try? StoredLinkServingTests.click("/curl", port: server.port)) == "302 https://example.com/c" })
        let taken = try Self.post(server, origin: own, fields: fields + ["token=\(Self.apiToken)"])
        #expect(taken.status == 409 && taken.body.contains("https://go.example.com/curl already exists"), "\(taken)")
        #expect(taken.body.contains(#"<input name="alias" type="text" value="curl" aria-invalid="true" class="invalid">"#))

        // No token configured at all: the form says so, and creates nothing even from the console's origin.
        let untokened = try ServerProcess(
            config: StoredLinkServingTests.config.replacingOccurrences(of: #""admin": "off""#, with: #""admin": "127.0.0.1:0""#)
        )
        defer { untokened.stop() }
        let page = String(
            decoding: try runTool(["curl", "-s", "http://127.0.0.1:\(untokened.adminPort)/console/links/new"]).stdout,
            as: UTF8.self
        )
        #expect(page.contains("Creating links needs a token, here as in the API") && page.contains("<option>go.example.com</option>"))
        let index = String(decoding: try runTool(["curl", "-s", "http://127.0.0.1:\(untokened.adminPort)/console"]).stdout, as: UTF8.self)
        #expect(index.contains(#"<li>Short links: <a href="/console/links/new">create one</a>"#))
        let refused = try Self.post(untokened, origin: "http://127.0.0.1:\(untokened.adminPort)", fields: fields)
        #expect(refused.status == 403 && refused.body.contains("creating links needs a token, in the console as in the API"), "\(refused)")
        #expect(try StoredLinkServingTests.links(["list"], untokened.directory).out == "no short links\n")
    }
}
