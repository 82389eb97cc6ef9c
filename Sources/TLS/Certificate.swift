internal import COpenSSL
internal import Glibc
import Support

/// What load-time certificate checks found; the caller turns these into diagnostics naming the file.
public struct CertificateFinding: Sendable, Equatable {
    public var isError: Bool
    public var rule: String
    public var message: String
}

/// Facts about a certificate that tests and `check` report.
public struct CertificateSummary: Sendable {
    public var serialHex: String
    public var notAfter: Int
    public var names: [String]
    /// `AB:CD:…`, as iOS shows it under the certificate's details.
    public var sha256Fingerprint: String
    public var notBefore = 0
    /// The issuer's common name (else its whole name).
    public var issuer = ""
    /// RFC 9773's certificate identifier: base64url(authority key identifier) "." base64url(serial DER
    /// content); nil without an authority key identifier.
    public var renewalIdentifier: String?
}

public enum CertificateInspector {
    /// Checks a certificate chain and key before anything is served: parseable, the key matches the
    /// leaf, the chain is in order (each certificate issued by the next), not expired or not yet valid
    /// (errors), expiring within 14 days (warning), and every listed host covered by the leaf's names.
    /// A certificate from `dev`'s local CA is a warning unless `developmentCertificateExpected` (in
    /// `dev` itself): a device outside developer mode and Apple's CDN do not trust it.
    public static func check(
        chainPEM: [UInt8],
        keyPEM: [UInt8],
        hosts: [String],
        now: Int,
        developmentCertificateExpected: Bool = false
    ) -> [CertificateFinding] {
        var findings: [CertificateFinding] = []
        func error(_ rule: String, _ message: String) { findings.append(CertificateFinding(isError: true, rule: rule, message: message)) }
        let material = PEMMaterial()
        material.chain = PEMMaterial.certificates(chainPEM)
        guard let leaf = material.chain.first else {
            error("tls.certificate", "no PEM certificate found (expected -----BEGIN CERTIFICATE-----)")
            return findings
        }
        material.key = PEMMaterial.privateKey(keyPEM)
        ERR_clear_error()
        if let key = material.key {
            if X509_check_private_key(leaf, key) != 1 {
                error("tls.key-mismatch", "the private key does not belong to the certificate (public keys differ)")
            }
        } else {
            error("tls.key", "no PEM private key found (expected -----BEGIN PRIVATE KEY-----; encrypted keys are not supported)")
        }
        ERR_clear_error()
        for index in 0..<(material.chain.count - 1) where X509_check_issued(material.chain[index + 1], material.chain[index]) != X509_V_OK {
            error(
                "tls.chain-order",
                "certificate \(index + 2) of the chain did not issue certificate \(index + 1); list the leaf first, then each "
                    + "issuer in order"
            )
        }
        var current = time_t(now)
        if let notAfter = X509_get0_notAfter(leaf), X509_cmp_time(notAfter, &current) < 0 {
            error("tls.expired", "the certificate expired on \(timeText(notAfter)); renew it")
        } else if let notAfter = X509_get0_notAfter(leaf) {
            var soon = time_t(now + 14 * 86_400)
            if X509_cmp_time(notAfter, &soon) < 0 {
                findings.append(
                    CertificateFinding(
                        isError: false,
                        rule: "tls.expiring",
                        message: "the certificate expires on \(timeText(notAfter)), within 14 days"
                    )
                )
            }
        }
        if let notBefore = X509_get0_notBefore(leaf), X509_cmp_time(notBefore, &current) > 0 {
            error("tls.not-yet-valid", "the certificate is not valid before \(timeText(notBefore)); check the clock")
        }
        if !developmentCertificateExpected, commonName(X509_get_issuer_name(leaf)) == DevCertificates.authorityName {
            findings.append(
                CertificateFinding(
                    isError: false,
                    rule: "tls.dev-certificate",
                    message: "this certificate was issued by the local CA of `aasa-server dev`/`dev-cert`: only devices in "
                        + "developer mode (applinks:HOST?mode=developer) accept it. Apple's CDN, which fetches the file for "
                        + "every other install, rejects it; use a certificate from a public CA (e.g. Let's Encrypt)"
                )
            )
        }
        for host in hosts {
            let probe = host.hasPrefix("*.") ? "aasa-wildcard-check." + host.dropFirst(2) : host
            let covered = probe.withCString { X509_check_host(leaf, $0, 0, 0, nil) == 1 }
            if !covered {
                error("tls.san-mismatch", "the certificate's names (\(names(leaf).joined(separator: ", "))) do not cover \(host)")
            }
        }
        ERR_clear_error()
        return findings
    }

    public static func summary(_ pem: [UInt8]) -> CertificateSummary? {
        let certificates = PEMMaterial.certificates(pem)
        defer { for certificate in certificates { X509_free(certificate) } }
        guard let leaf = certificates.first else { return nil }
        var serial = ""
        if let number = X509_get_serialNumber(leaf), let bignum = ASN1_INTEGER_to_BN(number, nil) {
            if let hex = BN_bn2hex(bignum) {
                serial = String(cString: hex)
                CRYPTO_free(hex, nil, 0)
            }
            BN_free(bignum)
        }
        var notAfter = 0
        if let time = X509_get0_notAfter(leaf) {
            var parsed = tm()
            if ASN1_TIME_to_tm(time, &parsed) == 1 { notAfter = Int(timegm(&parsed)) }
        }
        var digest = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        var fingerprint = ""
        if X509_digest(leaf, EVP_sha256(), &digest, &length) == 1 {
            let hex = Array("0123456789ABCDEF")
            fingerprint = digest[..<Int(length)].map { String([hex[Int($0 >> 4)], hex[Int($0 & 15)]]) }.joined(separator: ":")
        }
        var summary = CertificateSummary(serialHex: serial, notAfter: notAfter, names: names(leaf), sha256Fingerprint: fingerprint)
        if let time = X509_get0_notBefore(leaf) {
            var parsed = tm()
            if ASN1_TIME_to_tm(time, &parsed) == 1 { summary.notBefore = Int(timegm(&parsed)) }
        }
        summary.issuer = commonName(X509_get_issuer_name(leaf)) ?? ""
        if let keyIdentifier = X509_get0_authority_key_id(leaf), let number = X509_get_serialNumber(leaf),
            let keyBytes = ASN1_STRING_get0_data(keyIdentifier), let serialBytes = ASN1_STRING_get0_data(number)
        {
            let key = Array(UnsafeBufferPointer(start: keyBytes, count: Int(ASN1_STRING_length(keyIdentifier))))
            var serialDER = Array(UnsafeBufferPointer(start: serialBytes, count: Int(ASN1_STRING_length(number))))
            // DER INTEGER content: a leading zero keeps a positive number's high bit from reading as a sign.
            if let first = serialDER.first, first & 0x80 != 0 { serialDER.insert(0, at: 0) }
            summary.renewalIdentifier = Base64URL.encode(key) + "." + Base64URL.encode(serialDER)
        }
        ERR_clear_error()
        return summary
    }

    static func timeText(_ time: UnsafePointer<ASN1_TIME>) -> String {
        var parsed = tm()
        guard ASN1_TIME_to_tm(time, &parsed) == 1 else { return "an unreadable date" }
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        return "\(parsed.tm_year + 1900)-\(months[Int(parsed.tm_mon)])-\(parsed.tm_mday)"
    }

    /// The leaf's DNS names (subjectAltName), lowercased; nil when the PEM holds no certificate.
    public static func leafNames(_ chainPEM: [UInt8]) -> [String]? {
        let certificates = PEMMaterial.certificates(chainPEM)
        defer { for certificate in certificates { X509_free(certificate) } }
        guard let leaf = certificates.first else { return nil }
        return names(leaf).map { $0.lowercased() }
    }

    /// Whether a certificate name covers a host as a TLS client checks it (RFC 6125): the same name, or a
    /// `*.` name covering exactly one more label. A wildcard host (`*.example.com`) is covered by the same
    /// wildcard name only.
    public static func name(_ name: String, covers host: String) -> Bool {
        let host = host.lowercased()
        if name == host { return true }
        guard name.hasPrefix("*."), !host.hasPrefix("*."), let dot = host.firstIndex(of: ".") else { return false }
        return host[host.index(after: dot)...] == name.dropFirst(2) && dot != host.startIndex
    }

    static func commonName(_ name: OpaquePointer?) -> String? {
        guard let name else { return nil }
        var buffer = [CChar](repeating: 0, count: 256)
        let length = X509_NAME_get_text_by_NID(name, NID_commonName, &buffer, Int32(buffer.count))
        guard length > 0 else { return nil }
        return String(decoding: buffer[..<Int(length)].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// DNS names from the subjectAltName extension.
    static func names(_ certificate: OpaquePointer) -> [String] {
        guard let raw = X509_get_ext_d2i(certificate, NID_subject_alt_name, nil, nil) else { return [] }
        let names = OpaquePointer(raw)
        defer { GENERAL_NAMES_free(names) }
        var result: [String] = []
        for index in 0..<OPENSSL_sk_num(names) {
            guard let entry = OPENSSL_sk_value(names, index)?.assumingMemoryBound(to: GENERAL_NAME.self) else { continue }
            if entry.pointee.type == GEN_DNS, let text = entry.pointee.d.dNSName {
                let length = Int(ASN1_STRING_length(text))
                if let data = ASN1_STRING_get0_data(text) {
                    result.append(String(decoding: UnsafeBufferPointer(start: data, count: length), as: UTF8.self))
                }
            }
        }
        return result
    }
}
