import Foundation
import TestSupport
import Testing

/// The command line's Android side: validate recognises a statement list, match --android, generate.
@Suite("Android on the command line")
struct AndroidCLITests {
    func tool(_ arguments: [String], input: String? = nil) throws -> (status: Int32, stdout: String, stderr: String) {
        let result = try runTool([TestPaths.serverExecutable] + arguments, directory: repositoryRoot, input: input.map { Array($0.utf8) })
        return (result.status, String(decoding: result.stdout, as: UTF8.self), result.stderr)
    }

    static let example = "config/examples/android.json"

    @Test("validate --file recognises a statement list by its top-level array or its name, and checks it with assetlinks rules")
    func validateRecognises() throws {
        let broken = try tool(["validate", "--file", "Tests/AASATests/Fixtures/real-assetlinks/13__ordersplease.json"])
        #expect(broken.status == 1)
        #expect(broken.stderr.contains("[assetlinks.fingerprint]") && broken.stderr.contains("a placeholder"), "\(broken.stderr)")
        #expect(broken.stderr.contains("(Android statement list): invalid"))
        #expect(!broken.stderr.contains("[file.json-suffix]"), "assetlinks.json is the right name")
        let good = try tool(
            ["validate", "--file", "-"],
            input: try String(contentsOfFile: repositoryRoot + "/config/examples/assetlinks/brand.json", encoding: .utf8)
        )
        #expect(good.status == 0 && good.stderr.contains("(Android statement list): valid"), "\(good.stderr)")
        #expect(try tool(["validate", "--config", Self.example]).status == 0)
    }

    @Test("match --android: which packages a host verifies; --expect for CI; no Android apps and non-http URLs say why")
    func match() throws {
        let shop = try tool(["match", "--android", "--config", Self.example, "https://go.example.com/offer/1"])
        #expect(shop.status == 0 && shop.stdout.contains("verifies com.example.shop (statement 0; 1 certificate"), "\(shop.stdout)")
        let brand = try tool([
            "match", "--android", "--config", Self.example, "--expect", "org.example.brand", "https://brand.example.org/",
        ])
        #expect(brand.status == 0, "\(brand.stdout)")
        let wrong = try tool(["match", "--android", "--config", Self.example, "--expect", "com.example.other", "https://example.com/x"])
        #expect(wrong.status == 1 && wrong.stdout.contains("MISMATCH: expected com.example.other, got com.example.shop"))
        let none = try tool(["match", "--android", "--config", Self.example, "--expect", "none", "https://unknown.example.net/"])
        #expect(none.status == 0 && none.stdout.contains("no site serves unknown.example.net"))
        let scheme = try tool(["match", "--android", "--config", Self.example, "intent://example.com/"])
        #expect(scheme.status == 1 && scheme.stdout.contains("only http and https URLs are App Links"))
        let file = try tool(["match", "--android", "--file", "config/examples/assetlinks/brand.json", "https://anything.example/"])
        #expect(file.stdout.contains("verifies org.example.brand"))
    }

    @Test(
        "generate --android prints a host's statement list; --all writes assetlinks.json beside the AASA, and no AASA for an Android-only host"
    )
    func generate() throws {
        let printed = try tool(["generate", "--config", Self.example, "--host", "go.example.com", "--android"])
        #expect(printed.status == 0 && printed.stdout.hasPrefix(#"[{"relation":["delegate_permission/common.handle_all_urls"]"#))
        #expect(
            try tool(["generate", "--config", Self.example, "--host", "www.example.com", "--android"]).stdout.contains("get_login_creds")
        )
        let brand = try tool(["generate", "--config", Self.example, "--host", "brand.example.org", "--android"])
        #expect(brand.stdout == (try String(contentsOfFile: repositoryRoot + "/config/examples/assetlinks/brand.json", encoding: .utf8)))
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("aasa-android-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        #expect(try tool(["generate", "--config", Self.example, "--all", "--out", directory]).status == 0)
        let exists = { (path: String) in FileManager.default.fileExists(atPath: directory + "/" + path) }
        #expect(exists("example.com/.well-known/apple-app-site-association") && exists("example.com/.well-known/assetlinks.json"))
        #expect(exists("go.example.com/.well-known/assetlinks.json") && !exists("go.example.com/.well-known/apple-app-site-association"))
        #expect(try tool(["generate", "--config", Self.example, "--host", "brand.example.org"]).stdout.contains("webcredentials"))
    }

    @Test("match --android on a list with one malformed statement: the errors, a note, and the other statement's app still verifies")
    func malformedStatementSkipped() throws {
        let good = "14:6D:E9:83:C5:73:06:50:D8:EE:B9:95:2F:34:FC:64:16:A0:83:42:E6:1D:BE:A8:8A:04:96:B2:3F:CF:44:E5"
        let list =
            "["
            + [
                #"{"relation": ["delegate_permission/common.handle_all_urls"], "target": {"namespace": "android_app", "package_name": "com.example.good", "sha256_cert_fingerprints": ["\#(good)"]}}"#,
                #"{"relation": ["delegate_permission/common.handle_all_urls"], "target": {"namespace": "android_app", "package_name": "com.example.bad", "sha256_cert_fingerprints": ["nope"]}}"#,
            ].joined(separator: ",") + "]"
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("assetlinks-\(UUID().uuidString).json").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        try Data(list.utf8).write(to: URL(fileURLWithPath: path))
        let matched = try tool(["match", "--android", "--file", path, "--expect", "com.example.good", "https://example.com/x"])
        #expect(matched.status == 0, "\(matched.stdout) \(matched.stderr)")
        #expect(matched.stderr.contains("[assetlinks.fingerprint]"))
        #expect(matched.stderr.contains("Android skips the 1 statement with errors above and still verifies with the other 1"))
        #expect(matched.stdout.contains("verifies com.example.good") && !matched.stdout.contains("verifies com.example.bad"))
        #expect(try tool(["validate", "--file", path]).status == 1, "validate still fails the file")
    }
}
