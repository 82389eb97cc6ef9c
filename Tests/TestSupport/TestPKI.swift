public import TLS

/// Certificates made fresh per run with the dev CA code (nothing in the repository can expire).
public struct TestPKI {
    public let authority: DevCertificates.PEMPair
    public let shop: DevCertificates.PEMPair
    public let other: DevCertificates.PEMPair

    public init() throws {
        authority = try DevCertificates.makeAuthority(commonName: "aasa-server test CA")
        shop = try DevCertificates.makeLeaf(hosts: ["example.com", "www.example.com", "*.tenant.example.com"], authority: authority)
        other = try DevCertificates.makeLeaf(hosts: ["other.example.org"], authority: authority)
    }

    public var files: [String: String] {
        [
            "ca.pem": String(decoding: authority.certificate, as: UTF8.self),
            "shop.pem": String(decoding: shop.certificate, as: UTF8.self),
            "shop-key.pem": String(decoding: shop.key, as: UTF8.self),
            "other.pem": String(decoding: other.certificate, as: UTF8.self),
            "other-key.pem": String(decoding: other.key, as: UTF8.self),
        ]
    }

    public static let serverSection = #"""
        {"listen": ["127.0.0.1:0", {"address": "127.0.0.1", "port": 0, "tls": true}], "admin": "off",
         "certificates": [
           {"hosts": ["example.com", "www.example.com", "*.tenant.example.com"], "certificate": "shop.pem", "key": "shop-key.pem"},
           {"hosts": ["other.example.org"], "certificate": "other.pem", "key": "other-key.pem"}]}
        """#
}
