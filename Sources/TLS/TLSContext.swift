internal import COpenSSL
internal import Glibc
public import Posix

/// A failed OpenSSL call, with OpenSSL's error queue drained into readable lines.
public struct TLSError: Error, Sendable, CustomStringConvertible {
    public var call: String
    public var details: [String]

    init(_ call: String) {
        self.call = call
        details = TLSError.drain()
    }

    public init(call: String, details: [String]) {
        self.call = call
        self.details = details
    }

    public var description: String { details.isEmpty ? call : "\(call): \(details.joined(separator: "; "))" }

    static func drain() -> [String] {
        var lines: [String] = []
        while true {
            let code = ERR_get_error()
            if code == 0 { break }
            var buffer = [CChar](repeating: 0, count: 256)
            ERR_error_string_n(code, &buffer, buffer.count)
            lines.append(String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
        return lines
    }
}

/// Parsed PEM material: the chain (leaf first) and the private key, owned and freed here.
final class PEMMaterial {
    var chain: [OpaquePointer] = []
    var key: OpaquePointer?

    deinit {
        for certificate in chain { X509_free(certificate) }
        if let key { EVP_PKEY_free(key) }
    }

    static func certificates(_ pem: [UInt8]) -> [OpaquePointer] {
        var result: [OpaquePointer] = []
        pem.withUnsafeBytes { raw in
            guard let bio = BIO_new_mem_buf(raw.baseAddress, Int32(raw.count)) else { return }
            defer { BIO_free(bio) }
            while let certificate = PEM_read_bio_X509(bio, nil, nil, nil) { result.append(certificate) }
        }
        ERR_clear_error()  // the loop ends on a "no start line" error, which is expected
        return result
    }

    static func privateKey(_ pem: [UInt8]) -> OpaquePointer? {
        pem.withUnsafeBytes { raw -> OpaquePointer? in
            guard let bio = BIO_new_mem_buf(raw.baseAddress, Int32(raw.count)) else { return nil }
            defer { BIO_free(bio) }
            return PEM_read_bio_PrivateKey(bio, nil, nil, nil)
        }
    }
}

/// One certificate's `SSL_CTX`, configured to Mozilla's "intermediate" profile restricted to ECDHE +
/// AEAD: TLS 1.2 and 1.3 only, X25519/P-256/P-384, server cipher preference, no compression, no
/// client-initiated renegotiation, ALPN http/1.1, and resumption from a server-side session cache.
final class TLSContext: @unchecked Sendable {
    let context: OpaquePointer
    /// Names the certificate is listed for in the config (exact and `*.` wildcards), for SNI.
    let hosts: [String]

    static let cipherList =
        "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:ECDHE-ECDSA-AES256-GCM-SHA384:"
        + "ECDHE-RSA-AES256-GCM-SHA384:ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305"

    init(chainPEM: [UInt8], keyPEM: [UInt8], hosts: [String]) throws(TLSError) {
        guard let context = SSL_CTX_new(TLS_server_method()) else { throw TLSError("SSL_CTX_new") }
        self.context = context
        self.hosts = hosts
        guard COpenSSL_SSL_CTX_set_min_proto_version(context, TLS1_2_VERSION) == 1 else {
            throw TLSError("SSL_CTX_set_min_proto_version")
        }
        // NO_TICKET: resumption goes through the server-side session cache (TLS 1.2 session IDs, TLS 1.3
        // stateful tickets) instead of ticket keys that would live as long as the process and so
        // weaken forward secrecy unless rotated.
        SSL_CTX_set_options(
            context,
            COpenSSL_SSL_OP_NO_COMPRESSION() | COpenSSL_SSL_OP_NO_RENEGOTIATION()
                | COpenSSL_SSL_OP_CIPHER_SERVER_PREFERENCE() | COpenSSL_SSL_OP_NO_TICKET()
        )
        _ = COpenSSL_SSL_CTX_set_mode(
            context,
            Int(SSL_MODE_RELEASE_BUFFERS | SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER)
        )
        // Read ahead: one read takes whatever the socket holds (a record's header and body, or several
        // records) instead of a header read and a body read per record. What it holds beyond the record
        // being returned is announced by `hasBufferedInput`.
        _ = SSL_CTX_ctrl(context, SSL_CTRL_SET_READ_AHEAD, 1, nil)
        guard SSL_CTX_set_cipher_list(context, TLSContext.cipherList) == 1 else { throw TLSError("SSL_CTX_set_cipher_list") }
        guard COpenSSL_SSL_CTX_set1_groups_list(context, "X25519:P-256:P-384") == 1 else {
            throw TLSError("SSL_CTX_set1_groups_list")
        }
        _ = COpenSSL_SSL_CTX_set_session_cache_mode(context, Int(SSL_SESS_CACHE_SERVER))
        // A small cache: devices and Apple's CDN fetch each host rarely, so resumption helps little, while
        // every cached session holds memory for its whole lifetime (a burst of full handshakes would
        // otherwise leave megabytes behind for minutes).
        _ = COpenSSL_SSL_CTX_sess_set_cache_size(context, 1024)
        let sessionContext: [UInt8] = Array("aasa-server".utf8)
        _ = SSL_CTX_set_session_id_context(context, sessionContext, UInt32(sessionContext.count))
        SSL_CTX_set_alpn_select_cb(
            context,
            { _, out, outLength, input, inputLength, _ in
                // Offer http/1.1 when the client lists it; otherwise continue without ALPN.
                guard let input, let out, let outLength else { return SSL_TLSEXT_ERR_NOACK }
                var index = 0
                while index < Int(inputLength) {
                    let length = Int(input[index])
                    if index + 1 + length <= Int(inputLength), length == 8 {
                        let name = String(decoding: UnsafeBufferPointer(start: input + index + 1, count: 8), as: UTF8.self)
                        if name == "http/1.1" {
                            out.pointee = UnsafePointer(input + index + 1)
                            outLength.pointee = 8
                            return SSL_TLSEXT_ERR_OK
                        }
                    }
                    index += 1 + length
                }
                return SSL_TLSEXT_ERR_NOACK
            },
            nil
        )

        let material = PEMMaterial()
        material.chain = PEMMaterial.certificates(chainPEM)
        material.key = PEMMaterial.privateKey(keyPEM)
        guard let leaf = material.chain.first else {
            SSL_CTX_free(context)
            throw TLSError(call: "certificate", details: ["no PEM certificate found"])
        }
        guard let key = material.key else {
            SSL_CTX_free(context)
            throw TLSError(call: "key", details: ["no PEM private key found"] + TLSError.drain())
        }
        guard SSL_CTX_use_certificate(context, leaf) == 1 else {
            let error = TLSError("SSL_CTX_use_certificate")
            SSL_CTX_free(context)
            throw error
        }
        for intermediate in material.chain.dropFirst() {
            // add_extra_chain_cert takes ownership; hand it its own reference.
            X509_up_ref(intermediate)
            _ = COpenSSL_SSL_CTX_add_extra_chain_cert(context, intermediate)
        }
        guard SSL_CTX_use_PrivateKey(context, key) == 1, SSL_CTX_check_private_key(context) == 1 else {
            let error = TLSError("SSL_CTX_use_PrivateKey")
            SSL_CTX_free(context)
            throw TLSError(call: "the private key does not match the certificate", details: error.details)
        }
    }

    deinit { SSL_CTX_free(context) }
}

/// All certificates of a config, with SNI selection by a function the caller supplies (the server
/// uses the same host table as for documents: exact name, then the longest wildcard). A name it does
/// not know, or no SNI, gets the first certificate.
public final class TLSContexts: @unchecked Sendable {
    let contexts: [TLSContext]
    private let select: @Sendable (String) -> Int?
    /// Each certificate's leaf expiry (Unix seconds), in the order given.
    private let expiries: [Int?]

    public struct Certificate: Sendable {
        public var hosts: [String]
        public var chainPEM: [UInt8]
        public var keyPEM: [UInt8]
        public var label: String

        public init(hosts: [String], chainPEM: [UInt8], keyPEM: [UInt8], label: String) {
            self.hosts = hosts
            self.chainPEM = chainPEM
            self.keyPEM = keyPEM
            self.label = label
        }
    }

    /// `select` maps a server name (as the client sent it) to an index into `certificates`.
    public init(_ certificates: [Certificate], select: @escaping @Sendable (String) -> Int?) throws(TLSError) {
        var built: [TLSContext] = []
        for certificate in certificates {
            do {
                built.append(try TLSContext(chainPEM: certificate.chainPEM, keyPEM: certificate.keyPEM, hosts: certificate.hosts))
            } catch {
                throw TLSError(call: "\(certificate.label): \(error.call)", details: error.details)
            }
        }
        guard !built.isEmpty else { throw TLSError(call: "no certificates configured", details: []) }
        contexts = built
        self.select = select
        expiries = certificates.map { CertificateInspector.summary($0.chainPEM)?.notAfter }
        let table = Unmanaged.passUnretained(self).toOpaque()
        for context in built {
            _ = COpenSSL_SSL_CTX_set_tlsext_servername_callback(
                context.context,
                { ssl, _, argument in
                    guard let ssl, let argument, let name = SSL_get_servername(ssl, TLSEXT_NAMETYPE_host_name) else {
                        return SSL_TLSEXT_ERR_OK
                    }
                    let contexts = Unmanaged<TLSContexts>.fromOpaque(argument).takeUnretainedValue()
                    SSL_set_SSL_CTX(ssl, contexts.context(for: String(cString: name)).context)
                    return SSL_TLSEXT_ERR_OK
                }
            )
            _ = COpenSSL_SSL_CTX_set_tlsext_servername_arg(context.context, table)
        }
    }

    /// When the certificate a handshake for `serverName` gets expires (Unix seconds).
    public func expiry(forServerName serverName: String) -> Int? {
        expiries[select(serverName) ?? 0]
    }

    func context(for serverName: String) -> TLSContext {
        select(serverName).flatMap { $0 < contexts.count ? contexts[$0] : nil } ?? contexts[0]
    }

    /// Starts a server-side TLS session on a connected, non-blocking socket.
    public func session(fd: Int32) -> TLSSession? {
        guard let ssl = SSL_new(contexts[0].context) else { return nil }
        guard SSL_set_fd(ssl, fd) == 1 else {
            SSL_free(ssl)
            return nil
        }
        SSL_set_accept_state(ssl)
        return TLSSession(ssl: ssl, owner: self)
    }
}

/// One connection's TLS state over a non-blocking socket. OpenSSL's WANT_READ / WANT_WRITE become
/// "would block until readable / writable": a read may need the socket writable and a write readable.
public final class TLSSession {
    let ssl: OpaquePointer
    /// Keeps what the session was made from alive as long as the session (server: the contexts and the
    /// SNI table the callback points at; client: its context).
    let owner: AnyObject
    public private(set) var handshakeDone = false

    init(ssl: OpaquePointer, owner: AnyObject) {
        self.ssl = ssl
        self.owner = owner
    }

    deinit { SSL_free(ssl) }

    public enum HandshakeProgress: Equatable {
        case done
        case wouldBlock(Readiness)
        case failed(TLSFailure)
        case closed
    }

    public func handshake() -> HandshakeProgress {
        ERR_clear_error()
        let result = SSL_do_handshake(ssl)
        if result == 1 {
            handshakeDone = true
            return .done
        }
        switch outcome(result) {
        case .blocked(let readiness): return .wouldBlock(readiness)
        case .closed: return .closed
        case .failed(let failure): return .failed(failure)
        }
    }

    private enum Outcome {
        case blocked(Readiness)
        case closed
        case failed(TLSFailure)
    }

    /// Classifies a failed call by OpenSSL's error codes (never by the text of a message).
    private func outcome(_ result: Int32) -> Outcome {
        let code = SSL_get_error(ssl, result)
        let systemError = errno
        switch code {
        case SSL_ERROR_WANT_READ: return .blocked(.readable)
        case SSL_ERROR_WANT_WRITE: return .blocked(.writable)
        case SSL_ERROR_ZERO_RETURN: return .closed
        default:
            let queued = ERR_peek_error()
            // A peer that closes the TCP connection without close_notify: an end of stream, not a failure.
            if code == SSL_ERROR_SSL && COpenSSL_ERR_GET_REASON(queued) == SSL_R_UNEXPECTED_EOF_WHILE_READING {
                ERR_clear_error()
                return .closed
            }
            if code == SSL_ERROR_SYSCALL && queued == 0 && (systemError == 0 || systemError == ECONNRESET || systemError == EPIPE) {
                return .closed
            }
            return .failed(TLSFailure(code: code, reason: queued == 0 ? nil : COpenSSL_ERR_GET_REASON(queued), details: TLSError.drain()))
        }
    }

    public func read(into buffer: UnsafeMutableRawBufferPointer) -> IOResult {
        ERR_clear_error()
        var count = 0
        if SSL_read_ex(ssl, buffer.baseAddress, buffer.count, &count) == 1 { return .bytes(count) }
        switch outcome(0) {
        case .blocked(let readiness): return .wouldBlock(readiness)
        case .closed: return .closed
        case .failed(let failure): return .failed("TLS read: \(failure)")
        }
    }

    public func write(_ buffer: UnsafeRawBufferPointer) -> IOResult {
        ERR_clear_error()
        var count = 0
        if SSL_write_ex(ssl, buffer.baseAddress, buffer.count, &count) == 1 { return .bytes(count) }
        switch outcome(0) {
        case .blocked(let readiness): return .wouldBlock(readiness)
        case .closed: return .closed
        case .failed(let failure): return .failed("TLS write: \(failure)")
        }
    }

    /// Input OpenSSL already holds, decrypted or not (read ahead): no socket event will announce it.
    public var hasBufferedInput: Bool { SSL_has_pending(ssl) == 1 }

    /// Sends close_notify (best effort; the socket is closed next anyway).
    public func shutdown() {
        ERR_clear_error()
        _ = SSL_shutdown(ssl)
        ERR_clear_error()
    }

    public var protocolVersion: String { String(cString: SSL_get_version(ssl)) }
}

/// A TLS failure: OpenSSL's error class and reason code (what decisions use) and its text (what people read).
public struct TLSFailure: Sendable, Equatable, CustomStringConvertible {
    public var code: Int32
    public var reason: Int32?
    public var details: [String]

    public var description: String { details.first ?? "TLS error \(code)" }
}

/// The OpenSSL the process runs with (the shared library, which Debian updates in place).
public enum TLSLibrary {
    /// "OpenSSL 3.0.17 1 Jul 2025".
    public static var version: String { String(cString: OpenSSL_version(OPENSSL_VERSION)) }
}
