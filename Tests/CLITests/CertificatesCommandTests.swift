import Foundation
import TestSupport
import Testing

/// `aasa-server certificates` reads what is really stored: the certificate file itself, not only its
/// meta.json, and an on-demand name nobody asked for is no failure.
@Suite("certificates reads the storage")
struct CertificatesCommandTests {
    static func config(acme: String, sites: String) -> String {
        #"""
        {"version": 1, "apps": {"shop": "ABCDE12345.com.example.shop"}, "sites": \#(sites),
         "server": {"listen": [{"address": "127.0.0.1", "port": 8443, "tls": true}],
                    "acme": {"agreeToTerms": true, "storage": "storage", "email": "ops@example.com", \#(acme)}}}
        """#
    }

    func store(_ directory: String, _ host: String, certificate: String, meta: String) throws {
        // The default CA, Let's Encrypt, has its own folder.
        let folder =
            directory + "/storage/certificates/acme-v02.api.letsencrypt.org-directory/"
            + host.replacingOccurrences(of: "*", with: "_wildcard_")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try certificate.write(toFile: folder + "/certificate.pem", atomically: true, encoding: .utf8)
        try meta.write(toFile: folder + "/meta.json", atomically: true, encoding: .utf8)
    }

    /// A certificate and its key in one PEM, as ACME stores them, made by `dev-cert`.
    func devCertificate(_ directory: String) throws -> String {
        let made = try runTool([TestPaths.serverExecutable, "dev-cert", "--host", "example.com", "--out", directory + "/tls"])
        #expect(made.status == 0, "\(made.stderr)")
        return try String(contentsOfFile: directory + "/tls/cert.pem", encoding: .utf8)
            + String(contentsOfFile: directory + "/tls/key.pem", encoding: .utf8)
    }

    func certificates(_ directory: String) throws -> (status: Int32, rows: [String: [String: Any]]) {
        let result = try runTool([TestPaths.serverExecutable, "certificates", "--config", directory + "/config.json", "--json"])
        let object = try JSONSerialization.jsonObject(with: Data(result.stdout)) as? [String: Any]
        let rows = (object?["certificates"] as? [[String: Any]]) ?? []
        return (result.status, Dictionary(uniqueKeysWithValues: rows.map { ($0["host"] as? String ?? "", $0) }))
    }

    @Test("Garbage in certificate.pem is damaged, not valid; a good certificate beside a broken meta.json is valid")
    func readsTheCertificate() throws {
        try withTemporaryDirectory { directory in
            try write(
                Self.config(
                    acme: #""hosts": "config""#,
                    sites: #"[{"hosts": ["example.com", "www.example.com"], "webcredentials": {"apps": ["shop"]}}]"#
                ),
                to: directory + "/config.json"
            )
            let good = try devCertificate(directory)
            try store(directory, "example.com", certificate: good, meta: "{not json")
            try store(
                directory,
                "www.example.com",
                certificate: "-----BEGIN CERTIFICATE-----\ngarbage\n-----END CERTIFICATE-----\n",
                meta: #"{"notAfter": 4102444800, "renewAt": 4102444800, "notBefore": 0, "issuer": "X", "obtainedAt": 0}"#
            )
            let (status, rows) = try certificates(directory)
            #expect(status == 1, "a damaged certificate needs attention")
            #expect(rows["example.com"]?["source"] as? String == "acme")
            #expect(rows["example.com"]?["valid"] as? Bool == true)
            #expect((rows["example.com"]?["issuer"] as? String)?.isEmpty == false, "from the certificate: meta.json is unreadable")
            #expect((rows["example.com"]?["lastError"] as? String)?.contains("meta.json is unreadable") == true)
            #expect(rows["www.example.com"]?["source"] as? String == "damaged")
            #expect(rows["www.example.com"]?["valid"] as? Bool == false)
        }
    }

    @Test("On demand: a wildcard site nobody asked a name of yet is 'on demand, not requested' and exits 0; a stored name is listed")
    func onDemandNotRequested() throws {
        try withTemporaryDirectory { directory in
            try write(
                Self.config(
                    acme: #""hosts": "none", "onDemand": {"ask": "http://127.0.0.1:9/allowed"}"#,
                    sites: #"[{"hosts": ["*.tenant.example.com"], "webcredentials": {"apps": ["shop"]}}]"#
                ),
                to: directory + "/config.json"
            )
            var (status, rows) = try certificates(directory)
            #expect(status == 0)
            #expect(rows["*.tenant.example.com"]?["source"] as? String == "on demand, not requested")
            let good = try devCertificate(directory)
            try store(
                directory,
                "a.tenant.example.com",
                certificate: good,
                meta: #"{"notAfter": 4102444800, "renewAt": 4102444800, "notBefore": 0, "issuer": "X", "obtainedAt": 0}"#
            )
            (status, rows) = try certificates(directory)
            #expect(status == 0)
            #expect(rows["a.tenant.example.com"]?["source"] as? String == "acme")
        }
    }
}

/// What the server does with the stored certificates of hosts its config stopped serving.
@Suite("Stored certificates of removed hosts")
struct RemovedHostsTests {
    @Test("A host the config no longer serves is not renewed, and its files go 30 days after its certificate expired")
    func removedAfterGrace() throws {
        try withTemporaryDirectory { directory in
            // A CA on loopback that refuses connections: nothing leaves this machine.
            try write(
                #"""
                {"version": 1, "apps": {"shop": "ABCDE12345.com.example.shop"},
                 "sites": [{"hosts": ["kept.test"], "webcredentials": {"apps": ["shop"]}}],
                 "server": {"listen": ["127.0.0.1:0", {"address": "127.0.0.1", "port": 0, "tls": true}], "admin": "127.0.0.1:0",
                            "accessLog": false,
                            "acme": {"directory": "https://127.0.0.1:9/dir", "agreeToTerms": true, "storage": "storage"}}}
                """#,
                to: directory + "/config.json"
            )
            let now = Int(Date().timeIntervalSince1970)
            let folder = directory + "/storage/certificates/127.0.0.1-9-dir"
            for (host, notAfter) in [
                ("gone.test", now - 40 * 86_400), ("recent.test", now - 10 * 86_400), ("kept.test", now - 40 * 86_400),
            ] {
                try FileManager.default.createDirectory(atPath: folder + "/" + host, withIntermediateDirectories: true)
                try "not read".write(toFile: folder + "/\(host)/certificate.pem", atomically: true, encoding: .utf8)
                try #"{"notBefore": 0, "notAfter": \#(notAfter), "renewAt": \#(notAfter), "issuer": "X", "obtainedAt": 0}"#
                    .write(toFile: folder + "/\(host)/meta.json", atomically: true, encoding: .utf8)
            }
            let server = try ServerProcess(config: "{}", command: ["serve", "--config", directory + "/config.json"])
            defer { server.stop() }
            #expect(waitUntil(15) { !FileManager.default.fileExists(atPath: folder + "/gone.test") }, "\(server.stderr)")
            #expect(waitUntil(5) { server.stderr.contains("removed what was stored for gone.test: the config no longer serves it") })
            #expect(FileManager.default.fileExists(atPath: folder + "/recent.test/meta.json"), "within the grace period")
            #expect(FileManager.default.fileExists(atPath: folder + "/kept.test/meta.json"), "still served")
            #expect(waitUntil(5) { server.stderr.contains("not renewing the certificate for recent.test: the config serves no such host") })
            #expect(!server.stderr.contains("ordered a certificate for recent.test"))
            // Errors in words: a refused connection reads as one, not as a Swift value.
            #expect(waitUntil(10) { server.stderr.contains("cannot connect to 127.0.0.1:9: connection refused") }, "\(server.stderr)")
            #expect(!server.stderr.contains("failed(connect"))
        }
    }
}

/// `validate` says when a host can never get a certificate, before a server waits for one forever.
@Suite("Hosts that can never get a certificate")
struct UnreachableCertificateTests {
    func validate(listen: String, acme: String, hosts: String) throws -> (status: Int32, stderr: String) {
        try withTemporaryDirectory { directory in
            try write(
                #"""
                {"version": 1, "apps": {"shop": "ABCDE12345.com.example.shop"},
                 "sites": [{"hosts": \#(hosts), "webcredentials": {"apps": ["shop"]}}],
                 "server": {"listen": \#(listen),
                            "acme": {"directory": "https://127.0.0.1:9/dir", "agreeToTerms": true, "storage": "storage", \#(acme)}}}
                """#,
                to: directory + "/config.json"
            )
            let result = try runTool([TestPaths.serverExecutable, "validate", "--config", directory + "/config.json"])
            return (result.status, result.stderr)
        }
    }

    @Test("http-01 only with no plain listener is an error naming why; a workable set is not")
    func never() throws {
        let tlsOnly = #"[{"address": "127.0.0.1", "port": 8443, "tls": true}]"#
        let noPlain = try validate(listen: tlsOnly, acme: #""challenges": ["http-01"]"#, hosts: #"["shop.test"]"#)
        #expect(noPlain.status == 1)
        #expect(
            noPlain.stderr.contains("no host can ever get a certificate") && noPlain.stderr.contains("[acme.no-challenge]"),
            "\(noPlain.stderr)"
        )
        let both = #"["127.0.0.1:8080", {"address": "127.0.0.1", "port": 8443, "tls": true}]"#
        // A wildcard uses DNS-01 whatever the list says: with a hook it can get one.
        let wildcard = try validate(listen: both, acme: #""challenges": ["http-01"], "dnsHook": "/bin/true""#, hosts: #"["*.links.test"]"#)
        #expect(!wildcard.stderr.contains("acme.no-challenge"), "\(wildcard.stderr)")
        let fine = try validate(listen: both, acme: #""challenges": ["http-01"]"#, hosts: #"["shop.test"]"#)
        #expect(!fine.stderr.contains("acme.no-challenge"), "\(fine.stderr)")
    }
}
