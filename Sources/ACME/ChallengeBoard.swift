import Posix
import Support
import Synchronization
import TLS

/// The challenge answers an order is waiting on: HTTP-01 key authorizations by token (in memory and in
/// storage, so a replica that did not place the order answers too) and TLS-ALPN-01 certificates by
/// domain. Read by the event loops, written by the order workers.
final class ChallengeBoard: Sendable {
    private let httpAnswers = Mutex<[String: String]>([:])
    private let alpnAnswers = Mutex<[String: ServerCertificate]>([:])
    let storage: CertificateStorage

    init(storage: CertificateStorage) { self.storage = storage }

    /// RFC 8555 §8.3: tokens are base64url; anything else is no token of ours (and never a path).
    static func isToken(_ text: String) -> Bool {
        !text.isEmpty && text.utf8.count <= 256
            && text.utf8.allSatisfy { ASCII.isLetter($0) || ASCII.isDigit($0) || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: "_") }
    }

    func presentHTTP(token: String, keyAuthorization: String) throws(SystemError) {
        httpAnswers.withLock { $0[token] = keyAuthorization }
        try Posix.writeFileAtomically(Array(keyAuthorization.utf8), to: storage.challengePath(token), mode: 0o644)
    }

    func cleanUpHTTP(token: String) {
        httpAnswers.withLock { $0[token] = nil }
        Posix.removeFile(storage.challengePath(token))
    }

    /// The key authorization for `token`, when an order (this replica's or another's) waits on it.
    func httpAnswer(token: String) -> String? {
        guard Self.isToken(token) else { return nil }
        if let answer = httpAnswers.withLock({ $0[token] }) { return answer }
        guard let bytes = try? Posix.readFile(storage.challengePath(token), limit: 4096) else { return nil }
        return String(decoding: bytes, as: UTF8.self)
    }

    func presentALPN(domain: String, certificate: ServerCertificate) { alpnAnswers.withLock { $0[domain] = certificate } }
    func cleanUpALPN(domain: String) { alpnAnswers.withLock { $0[domain] = nil } }
    func alpnAnswer(domain: String) -> ServerCertificate? { alpnAnswers.withLock { $0[domain] } }
}
