import Posix
import Support
import Synchronization
import TLS

/// The challenge answers an order is waiting on: HTTP-01 key authorizations by token and TLS-ALPN-01
/// answers by domain. Both are written to the storage too, so whichever replica the CA's validation
/// reaches answers — behind a TCP load balancer that is any of them. The event loops read memory only:
/// a thread of the board's own copies the storage's answers into memory every quarter second, and an
/// order waits `propagationMilliseconds` after presenting before it asks the CA to validate.
final class ChallengeBoard: @unchecked Sendable {
    /// HTTP-01 key authorizations by token.
    private let http = Answers<String>()
    /// TLS-ALPN-01 certificates by domain, with the key authorization each was made from.
    private let alpn = Answers<(keyAuthorization: String, certificate: ServerCertificate)>()
    let storage: any Storage
    private let stopping = Atomic<Bool>(false)
    private var refresher: Posix.Thread?

    /// Longer than two refreshes: every replica has the answer in memory before the CA asks.
    static let propagationMilliseconds = 600
    static let refreshMilliseconds = 250
    /// Answers kept from the storage at most: orders in progress, not a directory anyone can fill.
    static let capacity = 1_000

    init(storage: any Storage) { self.storage = storage }

    func start() {
        refresher = try? Posix.Thread { [self] in
            while !stopping.load(ordering: .relaxed) {
                refresh()
                Posix.sleep(milliseconds: Self.refreshMilliseconds)
            }
        }
    }

    func stop() {
        stopping.store(true, ordering: .relaxed)
        refresher?.join()
        refresher = nil
    }

    /// RFC 8555 §8.3: tokens are base64url; anything else is no token of ours (and never a path).
    static func isToken(_ text: String) -> Bool {
        !text.isEmpty && text.utf8.count <= 256
            && text.utf8.allSatisfy { ASCII.isLetter($0) || ASCII.isDigit($0) || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: "_") }
    }

    func presentHTTP(token: String, keyAuthorization: String) throws(StorageError) {
        try http.present(
            token,
            keyAuthorization,
            keyAuthorization: keyAuthorization,
            at: CertificateStorage.challengeKey(token),
            in: storage
        )
    }

    func cleanUpHTTP(token: String) { http.remove(token, at: CertificateStorage.challengeKey(token), in: storage) }

    /// The key authorization for `token`, when an order (this replica's or another's) waits on it.
    func httpAnswer(token: String) -> String? { Self.isToken(token) ? http.answer(token) : nil }

    func presentALPN(domain: String, keyAuthorization: String, certificate: ServerCertificate) throws(StorageError) {
        try alpn.present(
            domain,
            (keyAuthorization, certificate),
            keyAuthorization: keyAuthorization,
            at: CertificateStorage.alpnChallengeKey(domain),
            in: storage
        )
    }

    func cleanUpALPN(domain: String) { alpn.remove(domain, at: CertificateStorage.alpnChallengeKey(domain), in: storage) }

    func alpnAnswer(domain: String) -> ServerCertificate? { alpn.answer(domain)?.certificate }

    /// Copies every replica's waiting answers from the storage into memory (off the event loops). A
    /// TLS-ALPN-01 certificate is made once per answer, here.
    func refresh() {
        var httpAnswers: [String: String] = [:]
        for token in storage.list(CertificateStorage.challengesFolder).prefix(Self.capacity) where Self.isToken(token) {
            if let bytes = try? storage.load(CertificateStorage.challengeKey(token), limit: 4096) {
                httpAnswers[token] = String(decoding: bytes, as: UTF8.self)
            }
        }
        http.replaceShared(httpAnswers)
        let previous = alpn.sharedAnswers
        var alpnAnswers: [String: (keyAuthorization: String, certificate: ServerCertificate)] = [:]
        for name in storage.list(CertificateStorage.alpnChallengesFolder).prefix(Self.capacity) {
            guard let bytes = try? storage.load(CertificateStorage.alpnChallengesFolder + "/" + name, limit: 4096) else { continue }
            let domain = CertificateStorage.host(fromDirectory: name)
            let keyAuthorization = String(decoding: bytes, as: UTF8.self)
            if let known = previous[domain], known.keyAuthorization == keyAuthorization {
                alpnAnswers[domain] = known
            } else if let certificate = try? ServerCertificate.alpnChallenge(domain: domain, keyAuthorization: keyAuthorization) {
                alpnAnswers[domain] = (keyAuthorization, certificate)
            }
        }
        alpn.replaceShared(alpnAnswers)
    }

    deinit { stopping.store(true, ordering: .relaxed) }
}

/// One kind of challenge answer: this replica's own, presented by its orders and written to the storage,
/// and every replica's, as the last refresh read them from the storage.
private final class Answers<Value: Sendable>: Sendable {
    private let own = Mutex<[String: Value]>([:])
    private let shared = Mutex<[String: Value]>([:])

    func present(
        _ key: String,
        _ value: Value,
        keyAuthorization: String,
        at storageKey: String,
        in storage: any Storage
    ) throws(StorageError) {
        own.withLock { $0[key] = value }
        try storage.store(storageKey, Array(keyAuthorization.utf8), secret: false)
    }

    func remove(_ key: String, at storageKey: String, in storage: any Storage) {
        _ = own.withLock { $0.removeValue(forKey: key) }
        storage.delete(storageKey)
    }

    func answer(_ key: String) -> Value? { own.withLock { $0[key] } ?? shared.withLock { $0[key] } }

    var sharedAnswers: [String: Value] { shared.withLock { $0 } }

    func replaceShared(_ answers: [String: Value]) { shared.withLock { $0 = answers } }
}
