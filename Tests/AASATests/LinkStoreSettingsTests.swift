import Testing

@testable import AASA

/// `server.linkStore`: a PostgreSQL connection string without a password (the password lives in a file),
/// refusals at the JSON path with the rule.
@Suite("Config: server.linkStore")
struct LinkStoreSettingsTests {
    static func load(_ linkStore: String) -> LoadedConfig {
        ConfigTests.load(ConfigTests.site(#""applinks": {"details": []}"#, extra: #", "server": {"linkStore": \#(linkStore)}"#))
    }

    @Test("A connection string and a password file are read as written; the store is SQLite when the key is absent")
    func accepted() throws {
        let loaded = Self.load(#"{"postgres": "host=db.internal dbname=links user=aasa sslmode=verify-full", "passwordFile": "pg.pw"}"#)
        let server = try #require(loaded.config?.server)
        #expect(server.linkStorePostgres == "host=db.internal dbname=links user=aasa sslmode=verify-full")
        #expect(server.linkStorePasswordFile == "pg.pw")
        #expect(!loaded.diagnostics.contains { $0.rule == "server.link-store" })
        let plain = ConfigTests.load(ConfigTests.site(#""applinks": {"details": []}"#))
        #expect(plain.config?.server.linkStorePostgres == nil)
    }

    @Test(
        "A password in the connection string is refused in every spelling libpq reads; the others pass",
        arguments: [
            ("host=db password=hunter2 dbname=links", true),
            ("host=db  password = 'hunter 2' dbname=links", true),
            ("PASSWORD=x", true),
            ("postgresql://aasa:hunter2@db.internal/links", true),
            ("postgres://db.internal/links?sslmode=require&password=x", true),
            ("host=db dbname=passwords user=password_reader", false),
            ("host=db application_name='password=x'", false),
            ("postgresql://aasa@db.internal:5432/links?sslmode=verify-full", false),
            ("postgresql://db.internal/links", false),
        ]
    )
    func password(connection: String, refused: Bool) {
        #expect(PostgresConnectionString.hasPassword(connection) == refused, "\(connection)")
        let loaded = Self.load(#"{"postgres": "\#(connection)"}"#)
        let finding = loaded.diagnostics.first { $0.rule == "server.link-store" }
        #expect((finding != nil) == refused, "\(loaded.diagnostics)")
        if let finding {
            #expect(finding.message.contains("passwordFile") && finding.path == "$.server.linkStore.postgres", "\(finding)")
            #expect(!finding.message.contains("hunter2"), "the finding repeats the password")
        }
    }

    @Test("A password file without a database, an empty string and an unknown key are each an error at their path")
    func refusals() {
        #expect(
            Self.load(#"{"passwordFile": "pg.pw"}"#).diagnostics.contains {
                $0.rule == "server.link-store" && $0.path == "$.server.linkStore"
            }
        )
        #expect(
            Self.load(#"{"postgres": ""}"#).diagnostics.contains {
                $0.rule == "server.link-store" && $0.path == "$.server.linkStore.postgres"
            }
        )
        #expect(Self.load(#"{"postgres": "host=db", "pasword": "x"}"#).diagnostics.contains { $0.path == "$.server.linkStore.pasword" })
    }

    @Test("ACME without a storage directory keeps its storage in the link store's PostgreSQL database; without one it is an error")
    func acmeStorage() throws {
        let acme = #""acme": {"agreeToTerms": true, "directory": "https://ca.test/directory"}"#
        let inDatabase = ConfigTests.load(
            ConfigTests.site(#""applinks": {"details": []}"#, extra: #", "server": {"linkStore": {"postgres": "host=db"}, \#(acme)}"#)
        )
        #expect(!inDatabase.diagnostics.contains { $0.rule == "acme.storage" }, "\(inDatabase.diagnostics)")
        #expect(inDatabase.config?.server.acme?.storage == "")
        let nowhere = ConfigTests.load(ConfigTests.site(#""applinks": {"details": []}"#, extra: #", "server": {\#(acme)}"#))
        let finding = try #require(nowhere.diagnostics.first { $0.rule == "acme.storage" })
        #expect(finding.message.contains("server.linkStore.postgres"), "\(finding)")
    }
}
