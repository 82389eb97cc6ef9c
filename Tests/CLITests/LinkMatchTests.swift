import Foundation
import TestSupport
import Testing

/// `match` on a link domain says, beside which app opens the URL, what each visitor without the app gets.
@Suite("match on a link domain")
struct LinkMatchTests {
    static let config = TestPaths.repositoryRoot + "/config/examples/link-domain.json"

    func match(_ arguments: [String]) throws -> (status: Int32, stdout: String) {
        let result = try runTool([TestPaths.serverExecutable, "match", "--config", Self.config] + arguments)
        return (result.status, String(decoding: result.stdout, as: UTF8.self))
    }

    @Test("Per visitor, with the link rule that decided; excluded paths and refused FDL links say so")
    func words() throws {
        let product = try match(["https://go.example.com/p/42"])
        #expect(product.status == 0)
        #expect(product.stdout.contains("  without the app, decided by link rule 1 {\"/\":\"/p/*\"} (line 27):\n"), "\(product.stdout)")
        #expect(product.stdout.contains("    desktop: 302 to the web: https://shop.example.com/item/42\n"))
        #expect(
            product.stdout.contains(
                "    Android: 302 to the store: https://play.google.com/store/apps/details?id=com.example.shop&referrer=https%3A%2F%2Fexample.com%2Fproduct%2F42\n"
            )
        )
        #expect(
            product.stdout.contains(
                "    iPhone: 200 landing page with the Smart App Banner; buttons: Open in Example Shop → https://open.example.com/p/42;"
            )
        )
        #expect(product.stdout.contains("    link preview: 200 preview page: \"Spring sale\", image https://cdn.example.com/spring.png\n"))
        let admin = try match(["https://go.example.com/admin/x"])
        #expect(admin.stdout.contains("  without the app: no link rule answers this path (a 404)\n"))
        let evil = try match(["https://go.example.com/?link=https%3A%2F%2Fevil.example%2F"])
        #expect(
            evil.stdout.contains("    everyone: 400: link points at evil.example, which this site's links.allow does not list\n"),
            "\(evil.stdout)"
        )
        let other = try match(["https://open.example.com/p/1"])
        #expect(!other.stdout.contains("without the app"), "a site without links says nothing of them")
    }

    @Test("--json carries the same answers under withoutApp")
    func json() throws {
        let result = try match(["--json", "https://go.example.com/promo"])
        let object = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        let withoutApp = try #require(object["withoutApp"] as? [String: Any])
        let answers = try #require(withoutApp["answers"] as? [[String: String]])
        #expect(
            answers.first { $0["visitor"] == "iPhone" }?["answer"] == "302 to the store: https://apps.apple.com/app/id123456789?ct=spring"
        )
        #expect((withoutApp["decidedBy"] as? String)?.hasPrefix("link rule 2") == true)
    }
}
