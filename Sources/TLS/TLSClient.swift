internal import COpenSSL
internal import Glibc
import Posix

/// A client context for `check`: the system's trust store plus any extra anchors, TLS 1.2 and 1.3, ALPN
/// http/1.1. Verification never aborts the handshake: the result is read afterwards, so `check` can
/// report what is wrong with a certificate (and, with `--insecure`, go on to fetch the document anyway).
public final class TLSClientContext: @unchecked Sendable {
    let context: OpaquePointer

    /// `extraAnchors`: PEM files whose certificates are trusted too (the dev CA of `aasa-server dev`).
    public init(extraAnchors: [String] = []) throws(TLSError) {
        guard let context = SSL_CTX_new(TLS_client_method()) else { throw TLSError("SSL_CTX_new") }
        self.context = context
        guard COpenSSL_SSL_CTX_set_min_proto_version(context, TLS1_2_VERSION) == 1 else {
            SSL_CTX_free(context)
            throw TLSError("SSL_CTX_set_min_proto_version")
        }
        _ = SSL_CTX_set_default_verify_paths(context)
        for file in extraAnchors {
            guard SSL_CTX_load_verify_locations(context, file, nil) == 1 else {
                let error = TLSError(call: "\(file): not a PEM certificate file", details: TLSError.drain())
                SSL_CTX_free(context)
                throw error
            }
        }
        SSL_CTX_set_verify(context, SSL_VERIFY_NONE, nil)
        let alpn: [UInt8] = [8] + Array("http/1.1".utf8)
        _ = SSL_CTX_set_alpn_protos(context, alpn, UInt32(alpn.count))
        ERR_clear_error()
    }

    deinit { SSL_CTX_free(context) }

    /// A client session on a connected socket, sending `serverName` as SNI and checking the certificate
    /// against it.
    public func session(fd: Int32, serverName: String) -> TLSSession? {
        guard let ssl = SSL_new(context) else { return nil }
        guard SSL_set_fd(ssl, fd) == 1 else {
            SSL_free(ssl)
            return nil
        }
        if !ServerNames.isIPAddress(serverName) {
            _ = COpenSSL_SSL_set_tlsext_host_name(ssl, serverName)
            _ = SSL_set1_host(ssl, serverName)
        } else {
            _ = X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), serverName)
        }
        SSL_set_connect_state(ssl)
        return TLSSession(ssl: ssl, owner: self)
    }
}

enum ServerNames {
    static func isIPAddress(_ text: String) -> Bool {
        text.contains(":") || (text.split(separator: ".").count == 4 && text.allSatisfy { $0.isNumber || $0 == "." })
    }
}

/// What a client learns about the server's certificate and the verification of its chain.
public struct PeerCertificate: Sendable, Equatable {
    public var subject: String
    public var issuer: String
    /// DNS names from subjectAltName.
    public var names: [String]
    public var notBefore: Int
    public var notAfter: Int
    /// Certificates the server sent (leaf included).
    public var chainLength: Int
    /// Nil when the chain verified and the name matched.
    public var verificationError: String?
    /// X509_V_ERR_* code, 0 when verified.
    public var verificationCode: Int
    public var selfSigned: Bool
    /// The names do not cover the name the session was opened for, whatever else verification found
    /// (OpenSSL reports only its first error, and a name is checked after the chain).
    public var hostnameMismatch: Bool
    public var expired: Bool
    public var notYetValid: Bool
    /// Issued by the local CA of `aasa-server dev` / `dev-cert`.
    public var issuedByDevAuthority: Bool
}

extension TLSSession {
    /// After a handshake as a client: the server's certificate and what verifying it found.
    public var peerCertificate: PeerCertificate? {
        guard let leaf = SSL_get1_peer_certificate(ssl) else { return nil }
        defer { X509_free(leaf) }
        func time(_ value: UnsafePointer<ASN1_TIME>?) -> Int {
            guard let value else { return 0 }
            var parsed = tm()
            return ASN1_TIME_to_tm(value, &parsed) == 1 ? Int(timegm(&parsed)) : 0
        }
        func nameText(_ name: OpaquePointer?) -> String {
            guard let name, let text = X509_NAME_oneline(name, nil, 0) else { return "" }
            defer { CRYPTO_free(text, nil, 0) }
            return String(cString: text)
        }
        let code = Int(SSL_get_verify_result(ssl))
        let chain = SSL_get_peer_cert_chain(ssl)
        var covered = true
        let parameters = SSL_get0_param(ssl)
        if let host = X509_VERIFY_PARAM_get0_host(parameters, 0) {
            covered = X509_check_host(leaf, host, 0, 0, nil) == 1
        } else if let address = X509_VERIFY_PARAM_get1_ip_asc(parameters) {
            covered = X509_check_ip_asc(leaf, address, 0) == 1
            CRYPTO_free(address, nil, 0)
        }
        let expired = X509_get0_notAfter(leaf).map { X509_cmp_current_time($0) < 0 } ?? false
        let notYetValid = X509_get0_notBefore(leaf).map { X509_cmp_current_time($0) > 0 } ?? false
        defer { ERR_clear_error() }
        return PeerCertificate(
            subject: nameText(X509_get_subject_name(leaf)),
            issuer: nameText(X509_get_issuer_name(leaf)),
            names: CertificateInspector.names(leaf),
            notBefore: time(X509_get0_notBefore(leaf)),
            notAfter: time(X509_get0_notAfter(leaf)),
            chainLength: chain.map { Int(OPENSSL_sk_num($0)) } ?? 1,
            verificationError: code == Int(X509_V_OK) ? nil : String(cString: X509_verify_cert_error_string(CLong(code))),
            verificationCode: code,
            selfSigned: code == Int(X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT) || code == Int(X509_V_ERR_SELF_SIGNED_CERT_IN_CHAIN),
            hostnameMismatch: !covered || code == Int(X509_V_ERR_HOSTNAME_MISMATCH) || code == Int(X509_V_ERR_IP_ADDRESS_MISMATCH),
            expired: expired || code == Int(X509_V_ERR_CERT_HAS_EXPIRED),
            notYetValid: notYetValid || code == Int(X509_V_ERR_CERT_NOT_YET_VALID),
            issuedByDevAuthority: CertificateInspector.commonName(X509_get_issuer_name(leaf)) == DevCertificates.authorityName
        )
    }

    /// The ALPN protocol agreed on, if any.
    public var negotiatedProtocol: String? {
        var data: UnsafePointer<UInt8>?
        var length: UInt32 = 0
        SSL_get0_alpn_selected(ssl, &data, &length)
        guard let data, length > 0 else { return nil }
        return String(decoding: UnsafeBufferPointer(start: data, count: Int(length)), as: UTF8.self)
    }
}

extension TLSFailure {
    /// What a failed handshake means, decided by OpenSSL's reason code.
    public enum Kind: Sendable, Equatable {
        /// The server answered with something that is not TLS (plain HTTP on the port, most often).
        case notTLS
        /// No protocol version both sides accept.
        case protocolVersion
        /// The server sent an alert (its description).
        case alert(String)
        case other
    }

    public var kind: Kind {
        guard let reason else { return .other }
        switch reason {
        case SSL_R_WRONG_VERSION_NUMBER, SSL_R_PACKET_LENGTH_TOO_LONG, SSL_R_RECORD_LENGTH_MISMATCH, SSL_R_HTTP_REQUEST,
            SSL_R_HTTPS_PROXY_REQUEST:
            return .notTLS
        case SSL_R_UNSUPPORTED_PROTOCOL, SSL_R_TLSV1_ALERT_PROTOCOL_VERSION, SSL_R_NO_PROTOCOLS_AVAILABLE,
            SSL_R_VERSION_TOO_LOW, SSL_R_VERSION_TOO_HIGH:
            return .protocolVersion
        default:
            // Alerts received are reported as reason 1000 + the alert number.
            if reason >= 1000 && reason < 1256 {
                return .alert(String(cString: SSL_alert_desc_string_long(Int32(reason - 1000))))
            }
            return .other
        }
    }
}
