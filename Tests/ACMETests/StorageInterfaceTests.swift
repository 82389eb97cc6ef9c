import Database
import Foundation
import Glibc
import Support
import TestSupport
import Testing

@testable import ACME
@testable import TLS

/// Runs `body` on a file storage in a fresh directory, on one in memory and on one in a fresh database of
/// a real PostgreSQL server: what the certificate code relies on holds for all three.
private func onEveryStorage(_ body: (any Storage) throws -> Void) throws {
    try withTemporaryDirectory { directory in try body(FileStorage(root: directory)) }
    try body(InMemoryStorage())
    try body(try freshPostgresStorage())
}

/// A `PostgresStorage` on a new database of the tests' shared cluster.
func freshPostgresStorage(lockStaleAfter: Int = FileStorage.defaultLockStaleAfter) throws -> PostgresStorage {
    let connection = try PostgresCluster.shared.get().createDatabase()
    return PostgresStorage(login: PostgresLogin(connection: connection, password: nil), lockStaleAfter: lockStaleAfter)
}

@Suite("The storage interface: files, memory and PostgreSQL behave alike")
struct StorageInterfaceTests {
    @Test("load, store, exists, list, stamp and delete: a missing key is missing, a replaced value changes its stamp")
    func values() throws {
        try onEveryStorage { storage in
            let kind = storage.location
            #expect(throws: StorageError.missing("a/b.json"), "\(kind)") { try storage.load("a/b.json", limit: 100) }
            #expect(!storage.exists("a/b.json"))
            #expect(storage.stamp("a/b.json") == nil)
            try storage.store("a/b.json", Array("one".utf8), secret: false)
            try storage.store("a/c/d.pem", Array("key".utf8), secret: true)
            #expect(try storage.load("a/b.json", limit: 100) == Array("one".utf8))
            #expect(throws: StorageError.self, "over the limit") { try storage.load("a/b.json", limit: 2) }
            #expect(storage.exists("a/b.json") && storage.exists("a/c"))
            #expect(Set(storage.list("a")) == ["b.json", "c"], "\(kind)")
            #expect(storage.list("nothing-here").isEmpty)
            let before = try #require(storage.stamp("a/b.json"))
            try storage.store("a/b.json", Array("two, longer".utf8), secret: false)
            #expect(storage.stamp("a/b.json") != before, "\(kind)")
            #expect(try storage.load("a/b.json", limit: 100) == Array("two, longer".utf8))
            // A folder with something in it stays; an emptied one goes.
            storage.delete("a/c")
            #expect(storage.exists("a/c/d.pem"), "\(kind)")
            storage.delete("a/c/d.pem")
            storage.delete("a/c")
            #expect(!storage.exists("a/c") && Set(storage.list("a")) == ["b.json"], "\(kind)")
            storage.delete("a/b.json")
            #expect(throws: StorageError.missing("a/b.json")) { try storage.load("a/b.json", limit: 100) }
        }
    }

    @Test("Secrets are private from the first byte (0600 on disk)")
    func secrets() throws {
        try withTemporaryDirectory { directory in
            let storage = FileStorage(root: directory)
            try storage.store("accounts/ca/account.pem", Array("key".utf8), secret: true)
            try storage.store("certificates/ca/x.test/meta.json", Array("{}".utf8), secret: false)
            var info = stat()
            #expect(stat(directory + "/accounts/ca/account.pem", &info) == 0 && info.st_mode & 0o777 == 0o600)
            #expect(stat(directory + "/certificates/ca/x.test/meta.json", &info) == 0 && info.st_mode & 0o777 == 0o644)
            #expect(stat(directory + "/accounts/ca", &info) == 0 && info.st_mode & 0o777 == 0o700)
        }
    }

    @Test("Locks: one holder at a time, the holder named, released only by its holder, a dead holder's taken over")
    func locks() throws {
        try onEveryStorage { storage in
            let kind = storage.location
            guard case .acquired(let first) = storage.lock("hosts/ca/a.test", owner: "replica-a", timeoutSeconds: 1) else {
                Issue.record("\(kind): the first lock failed")
                return
            }
            guard case .busy = storage.lock("hosts/ca/a.test", owner: "replica-b", timeoutSeconds: 1) else {
                Issue.record("\(kind): a held lock was given twice")
                return
            }
            #expect(storage.lockHolder("hosts/ca/a.test")?.hasPrefix("replica-a ") == true, "\(kind)")
            // Another name is another lock: a host called "account" is not the account.
            guard case .acquired(let other) = storage.lock("account", owner: "replica-b", timeoutSeconds: 1) else {
                Issue.record("\(kind): an unrelated lock was busy")
                return
            }
            other.release()
            #expect(first.isHeld && first.heartbeat())
            first.release()
            #expect(storage.lockHolder("hosts/ca/a.test") == nil, "\(kind)")
            guard case .acquired(let second) = storage.lock("hosts/ca/a.test", owner: "replica-b", timeoutSeconds: 1) else {
                Issue.record("\(kind): a released lock was not given")
                return
            }
            // The first holder's late release must not free the second's lock.
            first.release()
            #expect(second.isHeld, "\(kind)")
            second.release()
        }
        // A holder that stopped beating, on the memory storage's clock.
        let storage = InMemoryStorage()
        guard case .acquired(let dead) = storage.lock("hosts/ca/b.test", owner: "dead", timeoutSeconds: 1) else {
            Issue.record("no lock")
            return
        }
        storage.advance(seconds: FileStorage.defaultLockStaleAfter / 2)
        #expect(dead.heartbeat())
        storage.advance(seconds: FileStorage.defaultLockStaleAfter / 2 + 1)
        guard case .busy = storage.lock("hosts/ca/b.test", owner: "live", timeoutSeconds: 1) else {
            Issue.record("a beating holder's lock was taken over")
            return
        }
        storage.advance(seconds: FileStorage.defaultLockStaleAfter + 1)
        guard case .acquired(let live) = storage.lock("hosts/ca/b.test", owner: "live", timeoutSeconds: 1) else {
            Issue.record("a dead holder's lock was not taken over")
            return
        }
        #expect(!dead.isHeld && !dead.heartbeat() && live.isHeld)
        dead.release()
        #expect(live.isHeld)
    }

    @Test(
        "PostgreSQL locks: a holder that stops beating loses its lock after lockStaleAfter seconds of the database's clock; one that beats keeps it"
    )
    func postgresStaleLocks() throws {
        let storage = try freshPostgresStorage(lockStaleAfter: 2)
        let other = PostgresStorage(login: storage.login, lockStaleAfter: 2)
        guard case .acquired(let beating) = storage.lock("hosts/ca/a.test", owner: "beating", timeoutSeconds: 1),
            case .acquired(let dead) = storage.lock("hosts/ca/b.test", owner: "dead", timeoutSeconds: 1)
        else {
            Issue.record("no lock")
            return
        }
        // Three seconds, beating a.test every half second: b.test's holder is now stale, a.test's is not.
        for _ in 0..<6 {
            usleep(500_000)
            #expect(beating.heartbeat())
        }
        guard case .busy = other.lock("hosts/ca/a.test", owner: "replica-b", timeoutSeconds: 1) else {
            Issue.record("a beating holder's lock was taken over")
            return
        }
        guard case .acquired(let takenOver) = other.lock("hosts/ca/b.test", owner: "replica-b", timeoutSeconds: 1) else {
            Issue.record("a dead holder's lock was not taken over")
            return
        }
        #expect(!dead.heartbeat() && !dead.isHeld, "the dead holder learns it lost the lock")
        dead.release()
        #expect(other.lockHolder("hosts/ca/b.test")?.hasPrefix("replica-b ") == true, "its late release freed nothing")
        takenOver.release()
        beating.release()
        #expect(other.lockHolder("hosts/ca/a.test") == nil && other.lockHolder("hosts/ca/b.test") == nil)
    }

    @Test("The certificate layout on both: per CA, wildcards, failures, removal, and certificates of an earlier version adopted")
    func certificateLayout() throws {
        let meta = StoredMeta(notBefore: 100, notAfter: 200, renewAt: 150, renewalID: "aki.serial", issuer: "Test CA", obtainedAt: 100)
        try onEveryStorage { backend in
            let kind = backend.location
            let production = CertificateStorage(backend: backend, directoryURL: "https://acme-v02.api.letsencrypt.org/directory")
            let staging = CertificateStorage(backend: backend, directoryURL: "https://acme-staging-v02.api.letsencrypt.org/directory")
            try staging.storeCertificate("a.test", chainAndKey: Array("staging".utf8), meta: meta)
            #expect(production.storedHosts().isEmpty, "\(kind): a staging certificate is not production's")
            try production.storeCertificate("a.test", chainAndKey: Array("pem".utf8), meta: meta)
            try production.storeCertificate("*.w.test", chainAndKey: Array("wild".utf8), meta: meta)
            #expect(production.storedHosts() == ["*.w.test", "a.test"], "\(kind)")
            #expect(production.readMeta("a.test") == meta)
            #expect(try production.readCertificate("*.w.test").get() == Array("wild".utf8))
            #expect(backend.exists("certificates/acme-v02.api.letsencrypt.org-directory/_wildcard_.w.test/certificate.pem"))
            let failure = StoredFailure(time: 120, message: "the CA refused", nextAttempt: 180)
            production.recordFailure("a.test", failure)
            #expect(production.readFailure("a.test") == failure)
            try production.storeCertificate("a.test", chainAndKey: Array("pem2".utf8), meta: meta)
            #expect(production.readFailure("a.test") == nil, "\(kind): a stored certificate clears the failure")
            production.remove("a.test")
            #expect(production.storedHosts() == ["*.w.test"], "\(kind)")
            #expect(staging.storedHosts() == ["a.test"])
            // An earlier version's layout: certificates/<host>/.
            try backend.store("certificates/old.test/certificate.pem", Array("old".utf8), secret: true)
            try backend.store("certificates/old.test/meta.json", meta.json, secret: false)
            #expect(production.adoptLegacyCertificates() == 1, "\(kind)")
            #expect(production.readMeta("old.test") == meta && (try? production.readCertificate("old.test").get()) == Array("old".utf8))
            #expect(!backend.exists("certificates/old.test"), "\(kind): \(backend.list("certificates"))")
            #expect(production.adoptLegacyCertificates() == 0)
        }
    }

    @Test("Challenge answers go through the storage: one replica presents, another answers after its refresh; a failed store is an error")
    func challengeAnswers() throws {
        let shared = InMemoryStorage()
        let presenting = ChallengeBoard(storage: shared)
        let answering = ChallengeBoard(storage: shared)
        try presenting.presentHTTP(token: "tok-1_A", keyAuthorization: "tok-1_A.thumb")
        try presenting.presentALPN(
            domain: "alpn.test",
            keyAuthorization: "k.thumb",
            certificate: try ServerCertificate.alpnChallenge(domain: "alpn.test", keyAuthorization: "k.thumb")
        )
        #expect(answering.httpAnswer(token: "tok-1_A") == nil, "not before a refresh")
        answering.refresh()
        #expect(answering.httpAnswer(token: "tok-1_A") == "tok-1_A.thumb")
        #expect(answering.alpnAnswer(domain: "alpn.test") != nil)
        presenting.cleanUpHTTP(token: "tok-1_A")
        presenting.cleanUpALPN(domain: "alpn.test")
        answering.refresh()
        #expect(answering.httpAnswer(token: "tok-1_A") == nil && answering.alpnAnswer(domain: "alpn.test") == nil)
        #expect(shared.keys.isEmpty, "\(shared.keys)")
        shared.fail(.store, keySuffix: "tok-2")
        #expect(throws: StorageError.failed("injected: cannot write challenges/tok-2")) {
            try presenting.presentHTTP(token: "tok-2", keyAuthorization: "tok-2.thumb")
        }
    }
}
