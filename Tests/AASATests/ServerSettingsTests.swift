import Support
import Testing

@testable import AASA

@Suite("Server settings")
struct ServerSettingsTests {
    @Test(
        "Listen addresses: IPv4, bracketed IPv6, wildcard; names and bad ports rejected",
        arguments: [
            ("127.0.0.1:8080", "127.0.0.1", 8080), ("[::1]:0", "::1", 0), ("0.0.0.0:443", "0.0.0.0", 443),
            ("[::]:8080", "::", 8080), (":8080", "0.0.0.0", 8080), ("*:80", "0.0.0.0", 80),
        ]
    )
    func validAddresses(text: String, address: String, port: Int) throws {
        let listener = try ServerSettings.parseListenAddress(text).get()
        #expect(listener.address == address)
        #expect(listener.port == port)
    }

    @Test(
        "Invalid listen addresses say what to write",
        arguments: ["localhost:80", "127.0.0.1", "::1:80", "1.2.3.4:70000", "1.2.3:80", "[::1]80"]
    )
    func invalidAddresses(text: String) {
        guard case .failure(let error) = ServerSettings.parseListenAddress(text) else {
            Issue.record("\(text) should be rejected")
            return
        }
        #expect(!error.message.isEmpty)
    }

    @Test("The server section decodes every setting and keeps defaults for the rest")
    func decoding() throws {
        let json = #"""
            {"version": 1, "sites": [], "server": {
              "listen": ["127.0.0.1:8080", {"address": "::1", "port": 8443, "proxyProtocol": true}],
              "admin": "off", "threads": 3, "maxConnections": 50, "maxRequestsPerConnection": 7,
              "limits": {"requestLineBytes": 1024, "headerBytes": 2048, "headerCount": 20, "bodyBytes": 0},
              "timeouts": {"header": 2.5, "keepAlive": 90, "write": 5, "drain": 1},
              "cacheControl": "public, max-age=60", "healthPath": "/healthz", "accessLog": false,
              "trustForwardedHeaders": true, "fetcherNetworks": {"apple": ["17.0.0.0/8", "2620:149::/32"], "google": ["66.249.64.0/19"]}}}
            """#
        let decoded = ConfigDecoder.decode(Array(json.utf8))
        #expect(decoded.diagnostics.map(\.rule) == ["config.no-sites"], "\(decoded.diagnostics)")
        let server = try #require(decoded.config?.server)
        #expect(
            server.listeners == [
                ServerSettings.Listener(address: "127.0.0.1", port: 8080),
                ServerSettings.Listener(address: "::1", port: 8443, proxyProtocol: true),
            ]
        )
        #expect(server.admin == nil)
        #expect(server.threads == 3)
        #expect(server.maxConnections == 50 && server.maxRequestsPerConnection == 7)
        #expect(server.maxRequestLineBytes == 1024 && server.maxHeaderBytes == 2048 && server.maxHeaderCount == 20)
        #expect(server.maxBodyBytes == 0)
        #expect(server.headerTimeout == 2.5 && server.keepAliveTimeout == 90 && server.writeTimeout == 5 && server.drainTimeout == 1)
        #expect(server.cacheControl == "public, max-age=60" && server.healthPath == "/healthz")
        #expect(!server.accessLog && server.trustForwardedHeaders)
        #expect(server.appleNetworks.map(\.description) == ["17.0.0.0/8", "2620:149::/32"])
        #expect(server.googleNetworks.map(\.description) == ["66.249.64.0/19"])
        #expect(ServerSettings().appleNetworks.map(\.description) == ["17.0.0.0/8"] && ServerSettings().googleNetworks.isEmpty)
        #expect(ConfigDecoder.decode(Array(#"{"version": 1, "sites": []}"#.utf8)).config?.server == ServerSettings())
    }

    @Test(
        "Bad server settings name the key and the rule",
        arguments: [
            (#"{"listen": ["localhost:80"]}"#, "server.listen"),
            (#"{"listen": []}"#, "server.listen"),
            (#"{"threads": 0}"#, "type.mismatch"),
            (#"{"timeouts": {"header": -1}}"#, "type.mismatch"),
            (#"{"timeouts": {"headr": 1}}"#, "key.unknown"),
            (#"{"healthPath": "healthz"}"#, "server.health-path"),
            (#"{"healthPath": "/.well-known/apple-app-site-association"}"#, "server.health-path"),
            (#"{"cacheControl": "a\nb"}"#, "server.cache-control"),
            (#"{"accessLog": "yes"}"#, "type.mismatch"),
            (#"{"listen": [{"address": "0.0.0.0"}]}"#, "server.listen"),
            (#"{"fetcherNetworks": {"apple": ["17.1.0.0/8"]}}"#, "server.fetcher-networks"),
            (#"{"fetcherNetworks": {"apple": "17.0.0.0/8"}}"#, "server.fetcher-networks"),
            (#"{"fetcherNetworks": {"google": ["googlebot.com"]}}"#, "server.fetcher-networks"),
            (#"{"fetcherNetworks": {"microsoft": []}}"#, "key.unknown"),
        ]
    )
    func errors(server: String, rule: String) {
        let decoded = ConfigDecoder.decode(Array(#"{"version": 1, "sites": [], "server": \#(server)}"#.utf8))
        #expect(decoded.diagnostics.contains { $0.rule == rule && $0.severity == .error }, "\(decoded.diagnostics.map(\.rule))")
    }
}
