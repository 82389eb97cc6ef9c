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
        PEMParseSharing.certificates(pem, parse: parseCertificates)
    }

    static func privateKey(_ pem: [UInt8]) -> OpaquePointer? {
        PEMParseSharing.privateKey(pem, parse: parsePrivateKey)
    }

    private static func parseCertificates(_ pem: [UInt8]) -> [OpaquePointer] {
        var result: [OpaquePointer] = []
        pem.withUnsafeBytes { raw in
            guard let bio = BIO_new_mem_buf(raw.baseAddress, Int32(raw.count)) else { return }
            defer { BIO_free(bio) }
            while let certificate = PEM_read_bio_X509(bio, nil, nil, nil) { result.append(certificate) }
        }
        ERR_clear_error()  // the loop ends on a "no start line" error, which is expected
        return result
    }

    private static func parsePrivateKey(_ pem: [UInt8]) -> OpaquePointer? {
        pem.withUnsafeBytes { raw in COpenSSL_read_private_key(raw.baseAddress, Int32(raw.count)) }
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

    /// `alpn`: the one protocol it negotiates — http/1.1, or `acme-tls/1` for a TLS-ALPN-01 answer
    /// (RFC 8737).
    init(chainPEM: [UInt8], keyPEM: [UInt8], hosts: [String], alpn: [UInt8] = TLSContext.http11) throws(TLSError) {
        let context = try Self.configured(alpn: alpn)
        do {
            try Self.install(chainPEM: chainPEM, keyPEM: keyPEM, into: context)
        } catch {
            SSL_CTX_free(context)
            throw error
        }
        self.context = context
        self.hosts = hosts
    }

    /// A context with no certificate: the one a handshake starts in when only certificates obtained later
    /// (ACME) exist; the SNI callback moves it on.
    init(bare: Void) throws(TLSError) {
        context = try Self.configured(alpn: TLSContext.http11)
        hosts = []
    }

    static let http11: [UInt8] = Array("http/1.1".utf8)
    static let acmeTLS1: [UInt8] = Array("acme-tls/1".utf8)

    /// The profile, with ALPN selecting `alpn` when the client offers it.
    private static func configured(alpn: [UInt8]) throws(TLSError) -> OpaquePointer {
        guard let context = SSL_CTX_new(TLS_server_method()) else { throw TLSError("SSL_CTX_new") }
        func fail(_ call: String) -> TLSError {
            let error = TLSError(call)
            SSL_CTX_free(context)
            return error
        }
        guard COpenSSL_SSL_CTX_set_min_proto_version(context, TLS1_2_VERSION) == 1 else {
            throw fail("SSL_CTX_set_min_proto_version")
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
        guard SSL_CTX_set_cipher_list(context, TLSContext.cipherList) == 1 else { throw fail("SSL_CTX_set_cipher_list") }
        guard COpenSSL_SSL_CTX_set1_groups_list(context, "X25519:P-256:P-384") == 1 else {
            throw fail("SSL_CTX_set1_groups_list")
        }
        _ = COpenSSL_SSL_CTX_set_session_cache_mode(context, Int(SSL_SESS_CACHE_SERVER))
        // A small cache: devices and Apple's CDN fetch each host rarely, so resumption helps little, while
        // every cached session holds memory for its whole lifetime (a burst of full handshakes would
        // otherwise leave megabytes behind for minutes).
        _ = COpenSSL_SSL_CTX_sess_set_cache_size(context, 1024)
        // One TLS 1.3 ticket per handshake, not OpenSSL's two: a fetch is one connection, and a client that
        // resumes gets a fresh ticket on the resumed connection. Each ticket is a cache entry and a record
        // the server encrypts and writes on its own, so the second cost every full handshake a system
        // call and a TCP segment while halving the clients the cache holds.
        _ = SSL_CTX_set_num_tickets(context, 1)
        let sessionContext: [UInt8] = Array("aasa-server".utf8)
        _ = SSL_CTX_set_session_id_context(context, sessionContext, UInt32(sessionContext.count))
        // The protocol lives as long as the process (a static array), so the callback may point at it.
        let protocolPointer = alpn == TLSContext.http11 ? TLSContext.http11Pointer : TLSContext.acmeTLS1Pointer
        SSL_CTX_set_alpn_select_cb(
            context,
            { _, out, outLength, input, inputLength, argument in
                // Select our protocol when the client lists it; otherwise continue without ALPN.
                guard let input, let out, let outLength, let argument else { return SSL_TLSEXT_ERR_NOACK }
                let wanted = argument.assumingMemoryBound(to: UInt8.self)
                let wantedLength = Int(wanted[0])
                var index = 0
                while index < Int(inputLength) {
                    let length = Int(input[index])
                    if index + 1 + length <= Int(inputLength), length == wantedLength,
                        memcmp(input + index + 1, wanted + 1, length) == 0
                    {
                        out.pointee = UnsafePointer(input + index + 1)
                        outLength.pointee = UInt8(length)
                        return SSL_TLSEXT_ERR_OK
                    }
                    index += 1 + length
                }
                return SSL_TLSEXT_ERR_NOACK
            },
            UnsafeMutableRawPointer(mutating: protocolPointer)
        )
        return context
    }

    /// Length-prefixed protocol names, allocated once for the ALPN callback's argument.
    nonisolated(unsafe) private static let http11Pointer = lengthPrefixed(http11)
    nonisolated(unsafe) private static let acmeTLS1Pointer = lengthPrefixed(acmeTLS1)
    private static func lengthPrefixed(_ name: [UInt8]) -> UnsafePointer<UInt8> {
        let buffer = UnsafeMutablePointer<UInt8>.allocate(capacity: name.count + 1)
        buffer[0] = UInt8(name.count)
        for (index, byte) in name.enumerated() { buffer[index + 1] = byte }
        return UnsafePointer(buffer)
    }

    private static func install(chainPEM: [UInt8], keyPEM: [UInt8], into context: OpaquePointer) throws(TLSError) {
        let material = PEMMaterial()
        material.chain = PEMMaterial.certificates(chainPEM)
        material.key = PEMMaterial.privateKey(keyPEM)
        guard let leaf = material.chain.first else {
            throw TLSError(call: "certificate", details: ["no PEM certificate found"])
        }
        guard let key = material.key else {
            throw TLSError(call: "key", details: ["no PEM private key found"] + TLSError.drain())
        }
        guard SSL_CTX_use_certificate(context, leaf) == 1 else {
            throw TLSError("SSL_CTX_use_certificate")
        }
        for intermediate in material.chain.dropFirst() {
            // add_extra_chain_cert takes ownership; hand it its own reference.
            X509_up_ref(intermediate)
            _ = COpenSSL_SSL_CTX_add_extra_chain_cert(context, intermediate)
        }
        guard SSL_CTX_use_PrivateKey(context, key) == 1, SSL_CTX_check_private_key(context) == 1 else {
            let error = TLSError("SSL_CTX_use_PrivateKey")
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
    /// Where handshakes start: the first certificate's context, or a bare one when every certificate is
    /// obtained later.
    let initial: TLSContext
    private let select: @Sendable (String) -> Int?
    /// Each certificate's leaf expiry (Unix seconds), in the order given.
    private let expiries: [Int?]
    /// Whether each certificate file's leaf comes from the local CA of `aasa-server dev`.
    private let fromDevAuthority: [Bool]
    private let obtained: (any ObtainedCertificates)?

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

    /// `select` maps a server name (as the client sent it) to an index into `certificates`. A name it does
    /// not map goes to `obtained` (when given), then to the first certificate; with neither, the handshake
    /// fails with `unrecognized_name`.
    public init(
        _ certificates: [Certificate],
        select: @escaping @Sendable (String) -> Int?,
        obtained: (any ObtainedCertificates)? = nil
    ) throws(TLSError) {
        var built: [TLSContext] = []
        for certificate in certificates {
            do {
                built.append(try TLSContext(chainPEM: certificate.chainPEM, keyPEM: certificate.keyPEM, hosts: certificate.hosts))
            } catch {
                throw TLSError(call: "\(certificate.label): \(error.call)", details: error.details)
            }
        }
        guard !built.isEmpty || obtained != nil else { throw TLSError(call: "no certificates configured", details: []) }
        contexts = built
        if let first = built.first {
            initial = first
        } else {
            initial = try TLSContext(bare: ())
        }
        self.select = select
        self.obtained = obtained
        let summaries = certificates.map { CertificateInspector.summary($0.chainPEM) }
        expiries = summaries.map { $0?.notAfter }
        fromDevAuthority = summaries.map { $0?.issuer == DevCertificates.authorityName }
        let table = Unmanaged.passUnretained(self).toOpaque()
        for context in built + (built.isEmpty ? [initial] : []) {
            _ = COpenSSL_SSL_CTX_set_tlsext_servername_callback(
                context.context,
                { ssl, alert, argument in
                    guard let ssl, let argument else { return SSL_TLSEXT_ERR_OK }
                    let contexts = Unmanaged<TLSContexts>.fromOpaque(argument).takeUnretainedValue()
                    // Already moved to a TLS-ALPN-01 answer by the client hello callback.
                    if SSL_get_SSL_CTX(ssl) != contexts.initial.context { return SSL_TLSEXT_ERR_OK }
                    let name = SSL_get_servername(ssl, TLSEXT_NAMETYPE_host_name).map { String(cString: $0) }
                    guard let chosen = contexts.context(for: name) else {
                        alert?.pointee = SSL_AD_UNRECOGNIZED_NAME
                        return SSL_TLSEXT_ERR_ALERT_FATAL
                    }
                    if chosen !== contexts.initial { SSL_set_SSL_CTX(ssl, chosen.context) }
                    return SSL_TLSEXT_ERR_OK
                }
            )
            _ = COpenSSL_SSL_CTX_set_tlsext_servername_arg(context.context, table)
        }
        if obtained != nil {
            COpenSSL_SSL_CTX_set_client_hello_cb(
                initial.context,
                { ssl, _, argument in
                    guard let ssl, let argument else { return 1 }
                    let contexts = Unmanaged<TLSContexts>.fromOpaque(argument).takeUnretainedValue()
                    let hello = ClientHello(ssl)
                    guard let name = hello.serverName else { return 1 }
                    if hello.offersOnlyACMETLS, let answer = contexts.obtained?.challengeCertificate(forServerName: name) {
                        SSL_set_SSL_CTX(ssl, answer.context.context)
                        return 1
                    }
                    return contexts.waitsForCertificate(ssl, name) ? SSL_CLIENT_HELLO_RETRY : 1
                },
                table
            )
        }
    }

    /// How long a handshake waits for a certificate being read from the storage or ordered: long enough
    /// for an on-demand order at a CA that answers, short of clients' own handshake timeouts.
    public static let certificateWaitMilliseconds: Int64 = 5_000

    /// In the client hello callback: true suspends the handshake (the event loop asks again later) while
    /// the certificate for `name` is on its way and the session has not waited its bound yet.
    private func waitsForCertificate(_ ssl: OpaquePointer, _ name: String) -> Bool {
        let lowercased = name.lowercased()
        guard select(lowercased) == nil, let obtained, obtained.lookup(forServerName: lowercased) == .pending,
            let session = SSL_get_ex_data(ssl, 0).map({ Unmanaged<TLSSession>.fromOpaque($0).takeUnretainedValue() })
        else { return false }
        let now = Posix.monotonicMilliseconds()
        let deadline = session.certificateWaitDeadline ?? (now + Self.certificateWaitMilliseconds)
        session.certificateWaitDeadline = deadline
        return now < deadline
    }

    /// Each certificate file's hosts and leaf expiry (Unix seconds), for the expiry metric.
    public var fileCertificateExpiries: [(hosts: [String], notAfter: Int?)] {
        zip(contexts, expiries).map { ($0.hosts, $1) }
    }

    /// Certificate files from the local CA of `aasa-server dev`.
    public var devAuthorityCertificateCount: Int { fromDevAuthority.count { $0 } }

    /// Whether a handshake for `serverName` gets a certificate from the local CA of `aasa-server dev`, which
    /// only devices in developer mode trust (never from ACME: a CA issued those).
    public func isFromDevAuthority(forServerName serverName: String) -> Bool {
        guard let index = select(serverName) else { return false }
        return index < fromDevAuthority.count && fromDevAuthority[index]
    }

    /// When the certificate a handshake for `serverName` gets expires (Unix seconds).
    public func expiry(forServerName serverName: String) -> Int? {
        if let index = select(serverName) { return index < expiries.count ? expiries[index] : nil }
        // A GET of the console must not be a handshake: no storage read, no on-demand order.
        if let obtained { return obtained.knownExpiry(forServerName: serverName.lowercased()) }
        return expiries.first ?? nil
    }

    /// The context for a handshake naming `serverName` (nil: none sent); nil when there is none to offer.
    func context(for serverName: String?) -> TLSContext? {
        if let serverName {
            if let index = select(serverName), index < contexts.count { return contexts[index] }
            if let certificate = obtained?.certificate(forServerName: serverName.lowercased()) { return certificate.context }
        }
        return contexts.first
    }

    /// Starts a server-side TLS session on a connected, non-blocking socket.
    public func session(fd: Int32) -> TLSSession? {
        guard let ssl = SSL_new(initial.context) else { return nil }
        guard SSL_set_fd(ssl, fd) == 1 else {
            SSL_free(ssl)
            return nil
        }
        SSL_set_accept_state(ssl)
        let session = TLSSession(ssl: ssl, owner: self)
        // For the client hello callback, which sees only the SSL: the session lives as long as the SSL.
        SSL_set_ex_data(ssl, 0, Unmanaged.passUnretained(session).toOpaque())
        return session
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
    /// Set when the handshake first waits for a certificate: it stops waiting then.
    var certificateWaitDeadline: Int64?

    init(ssl: OpaquePointer, owner: AnyObject) {
        self.ssl = ssl
        self.owner = owner
    }

    deinit { SSL_free(ssl) }

    /// The name the client asked for (SNI), once its hello is read; nil when it sent none.
    public var requestedServerName: String? {
        SSL_get_servername(ssl, TLSEXT_NAMETYPE_host_name).map { String(cString: $0) }
    }

    public enum HandshakeProgress: Equatable {
        case done
        case wouldBlock(Readiness)
        /// Suspended until the certificate for its name is ready (or the wait's bound passes): step the
        /// handshake again later; no socket event will say when.
        case waitingForCertificate
        case failed(TLSFailure)
        case closed
    }

    public func handshake() -> HandshakeProgress {
        clearStaleErrors()
        let result = SSL_do_handshake(ssl)
        if result == 1 {
            handshakeDone = true
            return .done
        }
        if SSL_get_error(ssl, result) == SSL_ERROR_WANT_CLIENT_HELLO_CB { return .waitingForCertificate }
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
        clearStaleErrors()
        var count = 0
        if SSL_read_ex(ssl, buffer.baseAddress, buffer.count, &count) == 1 { return .bytes(count) }
        return unfinished("read")
    }

    public func write(_ buffer: UnsafeRawBufferPointer) -> IOResult {
        clearStaleErrors()
        var count = 0
        if SSL_write_ex(ssl, buffer.baseAddress, buffer.count, &count) == 1 { return .bytes(count) }
        return unfinished("write")
    }

    /// A read or write that did not transfer: blocked (until which readiness), closed by the peer, or failed.
    private func unfinished(_ operation: StaticString) -> IOResult {
        switch outcome(0) {
        case .blocked(let readiness): return .wouldBlock(readiness)
        case .closed: return .closed
        case .failed(let failure): return .failed("TLS \(operation): \(failure)")
        }
    }

    /// Input OpenSSL already holds, decrypted or not (read ahead): no socket event will announce it.
    public var hasBufferedInput: Bool { SSL_has_pending(ssl) == 1 }

    /// Whether OpenSSL keeps a server session's record buffers (a read and a write buffer of about 17 KB
    /// each) between calls. Released (how a server session starts: its context sets
    /// SSL_MODE_RELEASE_BUFFERS) an idle session holds none, but every request allocates and frees both
    /// again; kept, a busy session reuses them. Letting them go frees them at once when nothing is pending
    /// in them (OpenSSL frees the rest once it is used). A client context does not release its buffers,
    /// and nothing sets this on a client session.
    public var keepsBuffers: Bool = false {
        didSet {
            guard keepsBuffers != oldValue else { return }
            if keepsBuffers {
                _ = COpenSSL_SSL_clear_mode(ssl, Int(SSL_MODE_RELEASE_BUFFERS))
            } else {
                _ = COpenSSL_SSL_set_mode(ssl, Int(SSL_MODE_RELEASE_BUFFERS))
                _ = SSL_free_buffers(ssl)
            }
        }
    }

    /// Sends close_notify (best effort; the socket is closed next anyway).
    public func shutdown() {
        clearStaleErrors()
        _ = SSL_shutdown(ssl)
        clearStaleErrors()
    }

    /// Empties the thread's OpenSSL error queue before a call whose failure ``outcome(_:)`` classifies:
    /// SSL_get_error reads any queued error as the call's own, so one left by an unrelated call would turn
    /// a read that would block into a failure. Only when something is queued, which is exactly what
    /// SSL_get_error looks at (ERR_peek_error): ERR_clear_error resets all sixteen slots of the queue,
    /// freeing each, whether or not any holds an error — about 700 instructions, twice per HTTPS request.
    @inline(__always)
    private func clearStaleErrors() {
        if ERR_peek_error() != 0 { ERR_clear_error() }
    }

    public var protocolVersion: String { String(cString: SSL_get_version(ssl)) }

    /// The handshake answered a TLS-ALPN-01 validation (RFC 8737 §3): nothing else is spoken on it.
    public var answeredACMEChallenge: Bool {
        var data: UnsafePointer<UInt8>?
        var length: UInt32 = 0
        SSL_get0_alpn_selected(ssl, &data, &length)
        guard let data, length == 10 else { return false }
        return Array(UnsafeBufferPointer(start: data, count: 10)) == TLSContext.acmeTLS1
    }
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
