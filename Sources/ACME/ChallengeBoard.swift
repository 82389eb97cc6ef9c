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
    /// What this replica's orders present.
    private let ownHTTP = Mutex<[String: String]>([:])
    private let ownALPN = Mutex<[String: ServerCertificate]>([:])
    /// What the storage held at the last refresh (every replica's answers).
    private let sharedHTTP = Mutex<[String: String]>([:])
    private let sharedALPN = Mutex<[String: (keyAuthorization: String, certificate: ServerCertificate)]>([:])
    let storage: CertificateStorage
    private let stopping = Atomic<Bool>(false)
    private var refresher: Posix.Thread?

    /// Longer than two refreshes: every replica has the answer in memory before the CA asks.
    static let propagationMilliseconds = 600
    static let refreshMilliseconds = 250
    /// Answers kept from the storage at most: orders in progress, not a directory anyone can fill.
    static let capacity = 1_000

    init(storage: CertificateStorage) { self.storage = storage }

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

    func presentHTTP(token: String, keyAuthorization: String) throws(SystemError) {
        ownHTTP.withLock { $0[token] = keyAuthorization }
        try Posix.writeFileAtomically(Array(keyAuthorization.utf8), to: storage.challengePath(token), mode: 0o644)
    }

    func cleanUpHTTP(token: String) {
        ownHTTP.withLock { $0[token] = nil }
        Posix.removeFile(storage.challengePath(token))
    }

    /// The key authorization for `token`, when an order (this replica's or another's) waits on it.
    func httpAnswer(token: String) -> String? {
        guard Self.isToken(token) else { return nil }
        if let answer = ownHTTP.withLock({ $0[token] }) { return answer }
        return sharedHTTP.withLock { $0[token] }
    }

    func presentALPN(domain: String, keyAuthorization: String, certificate: ServerCertificate) throws(SystemError) {
        ownALPN.withLock { $0[domain] = certificate }
        try Posix.writeFileAtomically(Array(keyAuthorization.utf8), to: storage.alpnChallengePath(domain), mode: 0o644)
    }

    func cleanUpALPN(domain: String) {
        ownALPN.withLock { $0[domain] = nil }
        Posix.removeFile(storage.alpnChallengePath(domain))
    }

    func alpnAnswer(domain: String) -> ServerCertificate? {
        if let answer = ownALPN.withLock({ $0[domain] }) { return answer }
        return sharedALPN.withLock { $0[domain]?.certificate }
    }

    /// Copies every replica's waiting answers from the storage into memory (off the event loops). A
    /// TLS-ALPN-01 certificate is made once per answer, here.
    func refresh() {
        var http: [String: String] = [:]
        for token in (Posix.directoryEntries(storage.challengesFolder) ?? []).prefix(Self.capacity) where Self.isToken(token) {
            if let bytes = try? Posix.readFile(storage.challengePath(token), limit: 4096) {
                http[token] = String(decoding: bytes, as: UTF8.self)
            }
        }
        sharedHTTP.withLock { $0 = http }
        let previous = sharedALPN.withLock { $0 }
        var alpn: [String: (keyAuthorization: String, certificate: ServerCertificate)] = [:]
        for name in (Posix.directoryEntries(storage.alpnChallengesFolder) ?? []).prefix(Self.capacity) where !name.hasPrefix(".") {
            guard let bytes = try? Posix.readFile(storage.alpnChallengesFolder + "/" + name, limit: 4096) else { continue }
            let domain = CertificateStorage.host(fromDirectory: name)
            let keyAuthorization = String(decoding: bytes, as: UTF8.self)
            if let known = previous[domain], known.keyAuthorization == keyAuthorization {
                alpn[domain] = known
            } else if let certificate = try? ServerCertificate.alpnChallenge(domain: domain, keyAuthorization: keyAuthorization) {
                alpn[domain] = (keyAuthorization, certificate)
            }
        }
        sharedALPN.withLock { $0 = alpn }
    }

    deinit { stopping.store(true, ordering: .relaxed) }
}
