import Testing

@testable import AASA

@Suite("server.acme in the config")
struct ACMEConfigTests {
    static func load(
        _ acme: String,
        listen: String = #""127.0.0.1:80", {"address": "127.0.0.1", "port": 443, "tls": true}"#
    ) -> LoadedConfig {
        let json = """
            {"version": 1, "apps": {"shop": "ABCDE12345.com.example.shop"},
             "sites": [{"hosts": ["example.com"], "applinks": {"details": [{"apps": ["shop"], "components": [{"/": "/*"}]}]}}],
             "server": {"listen": [\(listen)], "acme": \(acme)}}
            """
        return ConfigLoader.load(configBytes: Array(json.utf8), configPath: "config.json") { _ in .failure(FileReadError("no files")) }
    }

    static func errors(_ loaded: LoadedConfig) -> [String] { loaded.diagnostics.filter { $0.severity == .error }.map(\.rule) }

    @Test("A minimal section: defaults to Let's Encrypt, ECDSA P-256, the config's hosts; TLS listeners need no certificate file")
    func minimal() throws {
        let loaded = Self.load(#"{"email": "ops@example.com", "agreeToTerms": true, "storage": "/var/lib/aasa-server/acme"}"#)
        #expect(Self.errors(loaded).isEmpty, "\(loaded.diagnostics)")
        let acme = try #require(loaded.config?.server.acme)
        #expect(acme.directory == ACMESettings.letsEncrypt)
        #expect(acme.keyType == .ecdsaP256)
        #expect(acme.configHosts)
        #expect(acme.onDemand == nil)
        #expect(acme.maxConcurrentOrders == 4)
    }

    @Test("Shorthands, every option, on demand with ask")
    func options() throws {
        let loaded = Self.load(
            #"""
            {"directory": "letsencrypt-staging", "agreeToTerms": true, "storage": "acme", "keyType": "rsa-2048", "hosts": "none",
             "onDemand": {"ask": "http://127.0.0.1:9000/allowed", "retryAfterFailure": 30}, "challenges": ["tls-alpn-01", "dns-01"],
             "dnsHook": "/usr/local/bin/dns", "maxConcurrentOrders": 8, "retryAfterFailure": 5, "lockStaleAfter": 300,
             "externalAccount": {"keyId": "kid", "hmacKeyFile": "eab.key"}, "directoryTrust": "ca.pem"}
            """#
        )
        #expect(Self.errors(loaded).isEmpty, "\(loaded.diagnostics)")
        let acme = try #require(loaded.config?.server.acme)
        #expect(acme.directory == ACMESettings.letsEncryptStaging)
        #expect(acme.keyType == .rsa2048)
        #expect(!acme.configHosts)
        #expect(acme.onDemand == ACMESettings.OnDemand(ask: "http://127.0.0.1:9000/allowed", retryAfterFailure: 30))
        #expect(acme.challenges == [.tlsALPN01, .dns01])
        #expect(acme.externalAccount == ACMESettings.ExternalAccount(keyID: "kid", hmacKeyFile: "eab.key"))
        #expect(acme.maxConcurrentOrders == 8 && acme.retryAfterFailure == 5 && acme.directoryTrust == "ca.pem")
        #expect(acme.lockStaleAfter == 300)
        #expect(ACMESettings().lockStaleAfter == 120)
    }

    @Test(
        "Mistakes are errors naming the rule: terms not agreed, no storage, http directory, bad e-mail, unknown challenge, dns-01 without hook"
    )
    func mistakes() {
        #expect(Self.errors(Self.load(#"{"storage": "acme"}"#)) == ["acme.terms"])
        #expect(Self.errors(Self.load(#"{"agreeToTerms": true}"#)) == ["acme.storage"])
        #expect(Self.errors(Self.load(#"{"agreeToTerms": true, "storage": "s", "directory": "http://ca.test/dir"}"#)) == ["acme.directory"])
        #expect(Self.errors(Self.load(#"{"agreeToTerms": true, "storage": "s", "email": "ops at example"}"#)) == ["acme.email"])
        #expect(Self.errors(Self.load(#"{"agreeToTerms": true, "storage": "s", "challenges": ["http-02"]}"#)) == ["acme.challenge"])
        #expect(Self.errors(Self.load(#"{"agreeToTerms": true, "storage": "s", "challenges": ["dns-01"]}"#)) == ["acme.dns-hook"])
        #expect(Self.errors(Self.load(#"{"agreeToTerms": true, "storage": "s", "keyType": "ed25519"}"#)) == ["acme.key-type"])
        #expect(Self.errors(Self.load(#"{"agreeToTerms": true, "storage": "s", "hosts": "all"}"#)) == ["acme.hosts"])
        #expect(Self.errors(Self.load(#"{"agreeToTerms": true, "storage": "s", "onDemand": {"ask": "ftp://x"}}"#)) == ["acme.ask"])
        #expect(Self.errors(Self.load(#"{"agreeToTerms": true, "storage": "s", "stoarge": "x"}"#)).contains("key.unknown"))
        // A lock judged stale sooner than three heartbeats would take a live replica's.
        for stale in ["10", "29", "86401", "1.5", "\"60\""] {
            #expect(!Self.errors(Self.load(#"{"agreeToTerms": true, "storage": "s", "lockStaleAfter": \#(stale)}"#)).isEmpty, "\(stale)")
        }
        // Without acme, a TLS listener still needs a certificate file.
        let withoutACME = ConfigLoader.load(
            configBytes: Array(
                #"{"version": 1, "sites": [], "server": {"listen": [{"address": "127.0.0.1", "port": 443, "tls": true}]}}"#.utf8
            ),
            configPath: "config.json"
        ) { _ in .failure(FileReadError("no files")) }
        #expect(Self.errors(withoutACME) == ["server.tls-certificates"])
    }
}
