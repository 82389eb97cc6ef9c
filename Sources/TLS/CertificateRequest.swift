internal import COpenSSL
internal import Glibc

/// A PKCS#10 certificate signing request for ACME's finalize: the names as subjectAltNames (the first
/// also as common name, which CAs ignore but some tools still show), signed by the certificate's key.
public enum CertificateRequest {
    /// DER, as RFC 8555 §7.4 wants it (base64url in the finalize request).
    public static func der(names: [String], key: SigningKey) throws(TLSError) -> [UInt8] {
        guard let request = X509_REQ_new() else { throw TLSError("X509_REQ_new") }
        defer { X509_REQ_free(request) }
        _ = X509_REQ_set_version(request, 0)
        guard let subject = X509_NAME_new() else { throw TLSError("X509_NAME_new") }
        defer { X509_NAME_free(subject) }
        if let first = names.first, first.utf8.count <= 64 {
            _ = first.withCString { value in
                X509_NAME_add_entry_by_txt(
                    subject,
                    "CN",
                    MBSTRING_UTF8,
                    UnsafeRawPointer(value).assumingMemoryBound(to: UInt8.self),
                    -1,
                    -1,
                    0
                )
            }
        }
        _ = X509_REQ_set_subject_name(request, subject)
        guard X509_REQ_set_pubkey(request, key.key) == 1 else { throw TLSError("X509_REQ_set_pubkey") }
        guard
            let alternativeNames = X509V3_EXT_conf_nid(nil, nil, NID_subject_alt_name, names.map { "DNS:\($0)" }.joined(separator: ","))
        else { throw TLSError("subjectAltName") }
        guard let extensions = OPENSSL_sk_new_null() else {
            X509_EXTENSION_free(alternativeNames)
            throw TLSError("OPENSSL_sk_new_null")
        }
        defer { OPENSSL_sk_pop_free(extensions) { X509_EXTENSION_free(OpaquePointer($0)) } }
        _ = OPENSSL_sk_push(extensions, UnsafeRawPointer(alternativeNames))
        guard X509_REQ_add_extensions(request, extensions) == 1 else { throw TLSError("X509_REQ_add_extensions") }
        guard X509_REQ_sign(request, key.key, EVP_sha256()) > 0 else { throw TLSError("X509_REQ_sign") }
        var output: UnsafeMutablePointer<UInt8>?
        let length = i2d_X509_REQ(request, &output)
        guard length > 0, let output else { throw TLSError("i2d_X509_REQ") }
        defer { CRYPTO_free(output, nil, 0) }
        return Array(UnsafeBufferPointer(start: output, count: Int(length)))
    }
}
