import COpenSSL
import Foundation
import TestSupport
import Testing

@testable import TLS

/// A key file is read the quick way when its PEM label (or PKCS#8 algorithm) names the key type, and by
/// OpenSSL's full search otherwise: whichever way, the key is the one `PEM_read_bio_PrivateKey` gives, and
/// a file it refuses is refused.
@Suite("Private keys in every PEM form")
struct PrivateKeyFormsTests {
    /// The key's DER as OpenSSL writes it back (nil when there is no key): equal keys, equal bytes.
    static func der(_ key: OpaquePointer?) -> [UInt8]? {
        guard let key else { return nil }
        defer { EVP_PKEY_free(key) }
        var out: UnsafeMutablePointer<UInt8>?
        let count = i2d_PrivateKey(key, &out)
        guard count > 0, let out else { return nil }
        defer { CRYPTO_free(out, nil, 0) }
        return Array(UnsafeBufferPointer(start: out, count: Int(count)))
    }

    /// What OpenSSL's own reader makes of the same bytes: the reference.
    static func reference(_ pem: [UInt8]) -> [UInt8]? {
        der(
            pem.withUnsafeBytes { raw -> OpaquePointer? in
                guard let bio = BIO_new_mem_buf(raw.baseAddress, Int32(raw.count)) else { return nil }
                defer { BIO_free(bio) }
                return PEM_read_bio_PrivateKey(bio, nil, nil, nil)
            }
        )
    }

    @Test(
        "PKCS#8 EC, RSA and Ed25519, SEC1, PKCS#1, parameters before the key, a certificate before the key: the same key as OpenSSL's reader"
    )
    func forms() throws {
        try withTemporaryDirectory { directory in
            func openssl(_ arguments: [String]) throws {
                let run = try runTool(["openssl"] + arguments, timeout: 30, directory: directory)
                #expect(run.status == 0, "openssl \(arguments.joined(separator: " ")): \(run.stderr)")
            }
            try openssl(["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", "pkcs8-ec.pem"])
            try openssl(["ec", "-in", "pkcs8-ec.pem", "-out", "sec1.pem"])
            try openssl(["ecparam", "-name", "secp384r1", "-genkey", "-out", "parameters-and-key.pem"])
            try openssl(["genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048", "-out", "pkcs8-rsa.pem"])
            try openssl(["rsa", "-in", "pkcs8-rsa.pem", "-traditional", "-out", "pkcs1-rsa.pem"])
            try openssl(["genpkey", "-algorithm", "ED25519", "-out", "ed25519.pem"])
            try openssl([
                "req", "-x509", "-key", "pkcs8-ec.pem", "-subj", "/CN=example.com", "-days", "1", "-out", "certificate.pem",
            ])
            func read(_ name: String) throws -> [UInt8] { Array(try Data(contentsOf: URL(fileURLWithPath: directory + "/" + name))) }
            let labels: [(String, String)] = [
                ("pkcs8-ec.pem", "-----BEGIN PRIVATE KEY-----"), ("sec1.pem", "-----BEGIN EC PRIVATE KEY-----"),
                ("parameters-and-key.pem", "-----BEGIN EC PARAMETERS-----"), ("pkcs8-rsa.pem", "-----BEGIN PRIVATE KEY-----"),
                ("pkcs1-rsa.pem", "-----BEGIN RSA PRIVATE KEY-----"), ("ed25519.pem", "-----BEGIN PRIVATE KEY-----"),
            ]
            for (name, label) in labels {
                let pem = try read(name)
                #expect(String(decoding: pem, as: UTF8.self).hasPrefix(label), "\(name) is in the form this case is about")
                let parsed = Self.der(PEMMaterial.privateKey(pem))
                #expect(parsed != nil, "\(name) is read")
                #expect(parsed == Self.reference(pem), "\(name): the same key as PEM_read_bio_PrivateKey")
            }
            // A certificate first, then the key (one file holding both): the certificate is not taken for a key.
            let combined = try read("certificate.pem") + read("pkcs8-ec.pem")
            #expect(Self.der(PEMMaterial.privateKey(combined)) == Self.reference(try read("pkcs8-ec.pem")))
        }
    }

    @Test("What OpenSSL's reader refuses is refused: no key, a truncated block, bytes after the key inside the block")
    func refusals() throws {
        try withTemporaryDirectory { directory in
            for arguments in [
                ["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", "key.pem"],
                ["pkcs8", "-topk8", "-nocrypt", "-in", "key.pem", "-outform", "DER", "-out", "key.der"],
            ] {
                let run = try runTool(["openssl"] + arguments, directory: directory)
                #expect(run.status == 0, "\(run.stderr)")
            }
            let der = Array(try Data(contentsOf: URL(fileURLWithPath: directory + "/key.der")))
            func pem(_ bytes: [UInt8], label: String = "PRIVATE KEY") -> [UInt8] {
                let text = Array(Data(bytes).base64EncodedString())
                let lines = stride(from: 0, to: text.count, by: 64).map { String(text[$0..<min($0 + 64, text.count)]) }
                return Array("-----BEGIN \(label)-----\n\(lines.joined(separator: "\n"))\n-----END \(label)-----\n".utf8)
            }
            #expect(Self.der(PEMMaterial.privateKey(pem(der))) == Self.reference(pem(der)), "the well-formed key, for contrast")
            #expect(Self.der(PEMMaterial.privateKey(pem(der))) != nil)
            let cases: [(String, [UInt8])] = [
                ("no PEM at all", Array("not a key".utf8)),
                ("empty", []),
                ("a truncated block", pem(Array(der.prefix(der.count / 2)))),
                ("bytes after the key inside the block", pem(der + [0x05, 0x00])),
                ("an EC key labelled RSA", pem(der, label: "RSA PRIVATE KEY")),
            ]
            for (name, bytes) in cases {
                #expect(Self.der(PEMMaterial.privateKey(bytes)) == Self.reference(bytes), "\(name): as OpenSSL's reader decides")
            }
            #expect(Self.der(PEMMaterial.privateKey(pem(Array(der.prefix(der.count / 2))))) == nil, "a truncated key is no key")
        }
    }
}
