import AASA
import Foundation
import Glibc
import Support
import Synchronization
import TestSupport
import Testing

@testable import ACME
@testable import TLS

@Suite("ACME protocol pieces (no network)")
struct ACMEProtocolTests {
    @Test("A JWS carries alg, jwk or kid, nonce and url in its protected header, and its signature verifies (ES256 and RS256)")
    func jws() throws {
        for kind in SigningKey.Kind.allCases {
            let key = try SigningKey.generate(kind)
            let body = try JWS.signed(
                payload: .object([("termsOfServiceAgreed", .bool(true))]),
                url: "https://ca.test/new-account",
                nonce: "n0nce",
                key: key,
                signer: .jwk
            )
            let root = try #require(JSONParser.parse(body).root)
            let protected = try #require(root["protected"]?.stringValue)
            let payload = try #require(root["payload"]?.stringValue)
            let signature = try #require(root["signature"]?.stringValue.flatMap(Base64URL.decode))
            let header = try #require(decoded(protected))
            #expect(header["alg"]?.stringValue == (kind == .ecdsaP256 ? "ES256" : "RS256"))
            #expect(header["nonce"]?.stringValue == "n0nce")
            #expect(header["url"]?.stringValue == "https://ca.test/new-account")
            #expect(header["jwk"]?["kty"]?.stringValue == (kind == .ecdsaP256 ? "EC" : "RSA"))
            #expect(header["kid"] == nil)
            if kind == .ecdsaP256 { #expect(signature.count == 64) }
            #expect(key.verify(signature, over: Array("\(protected).\(payload)".utf8)))
            #expect(!key.verify(signature, over: Array("\(protected).x\(payload)".utf8)))
            // POST-as-GET: an empty payload, the account URL as kid.
            let get = try JWS.signed(
                payload: nil,
                url: "https://ca.test/order/1",
                nonce: "n",
                key: key,
                signer: .keyID("https://ca.test/acct/7")
            )
            let getRoot = try #require(JSONParser.parse(get).root)
            #expect(getRoot["payload"]?.stringValue == "")
            let getHeader = try #require(decoded(getRoot["protected"]?.stringValue))
            #expect(getHeader["kid"]?.stringValue == "https://ca.test/acct/7")
            #expect(getHeader["jwk"] == nil)
        }
    }

    @Test("The key authorization is token.thumbprint, the thumbprint RFC 7638's SHA-256 over the ordered JWK members")
    func keyAuthorization() throws {
        let key = try SigningKey.generate(.ecdsaP256)
        let jwk = key.publicJWK
        #expect(jwk.map(\.0) == ["crv", "kty", "x", "y"])
        let canonical = "{\"crv\":\"P-256\",\"kty\":\"EC\",\"x\":\"\(jwk[2].1)\",\"y\":\"\(jwk[3].1)\"}"
        #expect(key.thumbprint == Base64URL.encode(Digest.sha256(Array(canonical.utf8))))
        #expect(JWS.keyAuthorization(token: "tok-en_1", key: key) == "tok-en_1.\(key.thumbprint)")
        // A key written and read back is the same key.
        let reread = try #require(SigningKey(pem: try key.pem()))
        #expect(reread.thumbprint == key.thumbprint)
        #expect(SigningKey(pem: Array("not a key".utf8)) == nil)
    }

    @Test("External Account Binding: an HS256 JWS over the account JWK with the CA's key id")
    func externalAccountBinding() throws {
        let key = try SigningKey.generate(.ecdsaP256)
        let hmacKey: [UInt8] = Array(repeating: 7, count: 32)
        guard
            case .object(let members) = JWS.externalAccountBinding(
                accountKey: key,
                keyID: "kid-1",
                hmacKey: hmacKey,
                url: "https://ca.test/na"
            )
        else {
            Issue.record("not an object")
            return
        }
        let fields = Dictionary(uniqueKeysWithValues: members.map { ($0.0, $0.1) })
        guard case .string(let protected)? = fields["protected"], case .string(let payload)? = fields["payload"],
            case .string(let signature)? = fields["signature"]
        else {
            Issue.record("missing members")
            return
        }
        let header = try #require(decoded(protected))
        #expect(header["alg"]?.stringValue == "HS256")
        #expect(header["kid"]?.stringValue == "kid-1")
        #expect(header["url"]?.stringValue == "https://ca.test/na")
        #expect(Base64URL.decode(payload) == JSONWriter.bytes(JWS.jwk(key)))
        #expect(Base64URL.decode(signature) == Digest.hmacSHA256(key: hmacKey, Array("\(protected).\(payload)".utf8)))
    }

    @Test("Directory, order, authorization and problem documents parse; problem types lose their URN prefix")
    func messages() throws {
        let directory = try #require(
            ACMEDirectory(
                json: Array(
                    #"{"newNonce":"https://ca/n","newAccount":"https://ca/a","newOrder":"https://ca/o","renewalInfo":"https://ca/ri","meta":{"externalAccountRequired":true}}"#
                        .utf8
                )
            )
        )
        #expect(directory.renewalInfo == "https://ca/ri")
        #expect(directory.externalAccountRequired)
        #expect(ACMEDirectory(json: Array(#"{"newNonce":"x"}"#.utf8)) == nil)
        let authorization = try #require(
            ACMEAuthorization(
                JSONParser.parse(
                    #"{"status":"invalid","identifier":{"type":"dns","value":"x.test"},"wildcard":true,"challenges":[{"type":"dns-01","url":"https://ca/c/1","token":"t","status":"invalid","error":{"type":"urn:ietf:params:acme:error:dns","detail":"no TXT record"}}]}"#
                ).root
            )
        )
        #expect(authorization.wildcard)
        #expect(authorization.failure == ACMEProblem(type: "dns", detail: "no TXT record", status: 0))
        let order = try #require(
            ACMEOrder(
                JSONParser.parse(
                    #"{"status":"valid","finalize":"https://ca/f","authorizations":["https://ca/z/1"],"certificate":"https://ca/cert/9"}"#
                ).root
            )
        )
        #expect(order.certificate == "https://ca/cert/9")
        #expect(order.authorizations == ["https://ca/z/1"])
        let problem = try #require(
            ACMEProblem(
                JSONParser.parse(
                    #"{"type":"urn:ietf:params:acme:error:rejectedIdentifier","detail":"Error creating new order","subproblems":[{"type":"urn:ietf:params:acme:error:rejectedIdentifier","detail":"x.internal is blocked"}]}"#
                ).root,
                status: 400
            )
        )
        #expect(problem.type == "rejectedIdentifier")
        #expect(problem.description == "rejectedIdentifier: Error creating new order (x.internal is blocked)")
    }

    @Test("Retry-After as seconds or an HTTP-date; renewal windows from RFC 3339 times")
    func retryAfterAndWindows() {
        let now = CivilTime.unixSeconds(year: 2026, month: 12, day: 1, hour: 20)
        #expect(ACMEClient.retryAfterSeconds("120", now: now) == 120)
        #expect(ACMEClient.retryAfterSeconds("Tue, 01 Dec 2026 23:00:00 GMT", now: now) == 3 * 3600)
        #expect(ACMEClient.retryAfterSeconds("Tue, 01 Dec 2026 19:00:00 GMT", now: now) == 0)
        #expect(ACMEClient.retryAfterSeconds("soon", now: now) == nil)
        let window = RenewalWindow(
            json: Array(#"{"suggestedWindow":{"start":"2026-12-20T00:00:00Z","end":"2026-12-21T12:00:00.5+02:00"}}"#.utf8)
        )
        #expect(window?.start == CivilTime.unixSeconds(year: 2026, month: 12, day: 20))
        #expect(window?.end == CivilTime.unixSeconds(year: 2026, month: 12, day: 21, hour: 10))
        #expect(
            RenewalWindow(json: Array(#"{"suggestedWindow":{"start":"2026-12-22T00:00:00Z","end":"2026-12-21T00:00:00Z"}}"#.utf8)) == nil
        )
    }

    @Test("Renewal: inside the CA's window, else two thirds of the lifetime minus jitter; backoff doubles to a day, Retry-After wins")
    func renewalPlan() {
        let day = 86_400
        // Renewal information asked again: after the CA's Retry-After, between 30 s and a day; 6 h without one.
        #expect(RenewalPlan.nextRenewalInfoCheck(retryAfter: 3_600, now: 100) == 3_700)
        #expect(RenewalPlan.nextRenewalInfoCheck(retryAfter: 1, now: 100) == 130)
        #expect(RenewalPlan.nextRenewalInfoCheck(retryAfter: 10 * day, now: 0) == day)
        #expect(RenewalPlan.nextRenewalInfoCheck(retryAfter: nil, now: 0) == 21_600)
        // A renewal time inside the new window stays; outside, a new one is drawn from the window.
        #expect(RenewalPlan.renewAt(keeping: 50 * day, window: (40 * day, 60 * day), random: 0.9) == 50 * day)
        #expect(RenewalPlan.renewAt(keeping: 50 * day, window: (10 * day, 20 * day), random: 0.5) == 15 * day)
        #expect(RenewalPlan.renewAt(notBefore: 0, notAfter: 90 * day, window: nil, random: 0) == 60 * day)
        #expect(RenewalPlan.renewAt(notBefore: 0, notAfter: 90 * day, window: nil, random: 1) == 57 * day)
        // A 6-day certificate renews after about 4 days, never after it expired.
        let short = RenewalPlan.renewAt(notBefore: 0, notAfter: 6 * day, window: nil, random: 0.5)
        #expect(short > 3 * day && short <= 4 * day)
        #expect(RenewalPlan.renewAt(notBefore: 0, notAfter: 90 * day, window: (start: 80 * day, end: 82 * day), random: 0.5) == 81 * day)
        #expect(RenewalPlan.backoff(failures: 1, base: 60, retryAfter: nil) == 60)
        #expect(RenewalPlan.backoff(failures: 4, base: 60, retryAfter: nil) == 480)
        #expect(RenewalPlan.backoff(failures: 40, base: 60, retryAfter: nil) == day)
        #expect(RenewalPlan.backoff(failures: 1, base: 60, retryAfter: 3 * 3600) == 3 * 3600)
        #expect(RenewalPlan.backoff(failures: 1, base: 60, retryAfter: 5) == 60)
        // The CA down or failing on its side: seconds, doubling, never past the normal backoff's base.
        #expect((1...6).map { RenewalPlan.transientBackoff(failures: $0, base: 60) } == [5, 10, 20, 40, 60, 60])
        #expect(ACMEError.unreachable("connection refused").isTransient)
        #expect(ACMEError.refused(ACMEProblem(type: "serverInternal", detail: "", status: 500), retryAfter: nil).isTransient)
        #expect(!ACMEError.refused(ACMEProblem(type: "rateLimited", detail: "", status: 429), retryAfter: 3600).isTransient)
        #expect(!ACMEError.refused(ACMEProblem(type: "unauthorized", detail: "", status: 403), retryAfter: nil).isTransient)
    }

    @Test("Names from a handshake or a request: only host names reach storage paths, only base64url tokens are answered")
    func names() {
        #expect(ChallengeBoard.isToken("evaGxfADs6pSRb2LAv9IZf17Dt3juxGJ-PCt92wr-oA"))
        for bad in ["", "../x", "a.b", "a b", String(repeating: "a", count: 300)] { #expect(!ChallengeBoard.isToken(bad)) }
        #expect(CertificateStorage.directoryName("*.tenant.test") == "_wildcard_.tenant.test")
        // One folder per CA: staging and production never share one.
        #expect(
            CertificateStorage.authorityFolder("https://acme-v02.api.letsencrypt.org/directory") == "acme-v02.api.letsencrypt.org-directory"
        )
        #expect(
            CertificateStorage.authorityFolder("https://acme-staging-v02.api.letsencrypt.org/directory")
                == "acme-staging-v02.api.letsencrypt.org-directory"
        )
        #expect(CertificateStorage.authorityFolder("https://localhost:14000/dir") == "localhost-14000-dir")
        #expect(CertificateStorage.authorityFolder("https://ca.example/acme/../x?y") == "ca.example-acme-..-x-y")
        #expect(CertificateStorage.host(fromDirectory: "_wildcard_.tenant.test") == "*.tenant.test")
    }

    @Test("TLS-ALPN-01 answers only a client hello offering exactly acme-tls/1; SNI and ALPN read from the raw extensions")
    func clientHello() {
        func alpn(_ names: [String]) -> [UInt8] {
            let list = names.flatMap { [UInt8($0.utf8.count)] + Array($0.utf8) }
            return [UInt8(list.count >> 8), UInt8(list.count & 0xFF)] + list
        }
        alpn(["acme-tls/1"]).withUnsafeBufferPointer { #expect(ClientHello.alpn($0) == [Array("acme-tls/1".utf8)]) }
        alpn(["h2", "http/1.1"]).withUnsafeBufferPointer { #expect(ClientHello.alpn($0).count == 2) }
        [0, 9, 2, 65].withUnsafeBufferPointer { #expect(ClientHello.alpn($0).isEmpty) }  // a length past the end
        var hello = ClientHello(protocols: [Array("acme-tls/1".utf8)])
        #expect(hello.offersOnlyACMETLS)
        hello.protocols.append(Array("http/1.1".utf8))
        #expect(!hello.offersOnlyACMETLS)
        let name = Array("Shop.Example.com".utf8)
        let entry: [UInt8] = [0, UInt8(name.count >> 8), UInt8(name.count & 0xFF)] + name
        let serverName: [UInt8] = [UInt8(entry.count >> 8), UInt8(entry.count & 0xFF)] + entry
        serverName.withUnsafeBufferPointer { #expect(ClientHello.hostName($0) == "shop.example.com") }
        Array(serverName.dropLast()).withUnsafeBufferPointer { #expect(ClientHello.hostName($0) == nil) }
    }
}

/// A base64url-encoded JSON object, parsed.
private func decoded(_ text: String?) -> JSONNode? {
    guard let text, let bytes = Base64URL.decode(text) else { return nil }
    return JSONParser.parse(bytes).root
}

@Suite("Storage locks shared by replicas")
struct StorageLockTests {
    @Test("Exclusive: a held lock is busy for another holder until released; one not touched for two minutes is taken over")
    func lock() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/locks/shop.test.lock"
            guard case .acquired(let first) = FileStorageLock.acquire(path, owner: "a", timeoutSeconds: 1) else {
                Issue.record("the first acquire failed")
                return
            }
            guard case .busy = FileStorageLock.acquire(path, owner: "b", timeoutSeconds: 1) else {
                Issue.record("a held lock was acquired twice")
                return
            }
            first.release()
            guard case .acquired(let second) = FileStorageLock.acquire(path, owner: "b", timeoutSeconds: 1) else {
                Issue.record("a released lock was not acquired")
                return
            }
            // The holder died: its lock file was last touched three minutes ago.
            var times = [timespec(tv_sec: time(nil) - 180, tv_nsec: 0), timespec(tv_sec: time(nil) - 180, tv_nsec: 0)]
            #expect(utimensat(AT_FDCWD, path, &times, 0) == 0)
            guard case .acquired(let taken) = FileStorageLock.acquire(path, owner: "c", timeoutSeconds: 1) else {
                Issue.record("a stale lock was not taken over")
                return
            }
            // The one taken over is no longer the first holder's: its heartbeat says so, its release leaves it.
            #expect(!second.heartbeat() && !second.isHeld)
            second.release()
            #expect(FileManager.default.fileExists(atPath: path), "a release removes only its own lock")
            // A heartbeat keeps a live holder's lock fresh.
            #expect(utimensat(AT_FDCWD, path, &times, 0) == 0)
            #expect(taken.heartbeat())
            guard case .busy = FileStorageLock.acquire(path, owner: "d", timeoutSeconds: 1) else {
                Issue.record("a touched lock was taken over")
                return
            }
            taken.release()
            #expect(!FileManager.default.fileExists(atPath: path))
        }
    }

    @Test("Two replicas taking over one stale lock at once: exactly one holds it, every time")
    func takeoverRace() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/locks/hosts/race.test.lock"
            try FileManager.default.createDirectory(atPath: directory + "/locks/hosts", withIntermediateDirectories: true)
            for round in 0..<8 {
                try "dead-replica \(round)\n".write(toFile: path, atomically: false, encoding: .utf8)
                var times = [timespec(tv_sec: time(nil) - 600, tv_nsec: 0), timespec(tv_sec: time(nil) - 600, tv_nsec: 0)]
                #expect(utimensat(AT_FDCWD, path, &times, 0) == 0)
                let holders = Mutex<[FileStorageLock]>([])
                DispatchQueue.concurrentPerform(iterations: 2) { replica in
                    if case .acquired(let lock) = FileStorageLock.acquire(path, owner: "replica-\(replica)", timeoutSeconds: 1) {
                        holders.withLock { $0.append(lock) }
                    }
                }
                let held = holders.withLock { $0 }
                #expect(held.count == 1, "round \(round): \(held.count) holders")
                #expect(held.allSatisfy { $0.heartbeat() })
                for lock in held { lock.release() }
                #expect(!FileManager.default.fileExists(atPath: path))
            }
            let left = try FileManager.default.contentsOfDirectory(atPath: directory + "/locks/hosts")
            #expect(left.isEmpty, "nothing moved aside is left behind: \(left)")
        }
    }

    @Test("Staleness is judged by the storage's clock: a lock touched 30 s ago is live whatever this machine's clock says")
    func storageClock() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/locks/hosts/clock.test.lock"
            try FileManager.default.createDirectory(atPath: directory + "/locks/hosts", withIntermediateDirectories: true)
            try "other-replica 1\n".write(toFile: path, atomically: false, encoding: .utf8)
            var times = [timespec(tv_sec: time(nil) - 30, tv_nsec: 0), timespec(tv_sec: time(nil) - 30, tv_nsec: 0)]
            #expect(utimensat(AT_FDCWD, path, &times, 0) == 0)
            let storageNow = try #require(FileStorageLock.storageTime(directory + "/locks/hosts"))
            #expect(abs(storageNow - Int(time(nil))) <= 2)
            guard case .busy = FileStorageLock.acquire(path, owner: "me", timeoutSeconds: 1) else {
                Issue.record("a live lock was taken over")
                return
            }
            // A replica whose own clock ran 10 minutes ahead would have: the clock is the storage's.
            guard
                case .acquired(let skewed) = FileStorageLock.acquire(
                    path,
                    owner: "me",
                    timeoutSeconds: 1,
                    clock: { _ in Int(time(nil)) + 600 }
                )
            else {
                Issue.record("the injected clock was not used")
                return
            }
            skewed.release()
        }
    }
}
