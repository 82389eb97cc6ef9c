import AASA
import HTTP1
import HTTPClient
import Posix
import Support
import Synchronization
import TLS

/// The ACME account: loaded from the storage, or created and registered once, under a lock.
extension CertificateManager {
    func forgetAccount() {
        account.withLock { $0 = nil }
        storage.backend.delete(storage.accountFolder(settings.directory) + "/account.json")
    }

    /// A client with the account: loaded from storage, else created and registered (once, under a lock).
    func accountClient() throws(ACMEError) -> ACMEClient {
        if let (key, url) = account.withLock({ $0 }) {
            return counted(ACMEClient(directoryURL: settings.directory, http: http, accountKey: key, accountURL: url))
        }
        let backend = storage.backend
        let folder = storage.accountFolder(settings.directory)
        let keyKey = folder + "/account.pem"
        let accountKey = folder + "/account.json"
        let lock: any StorageLockHandle
        switch backend.lock(CertificateStorage.accountLockName, owner: owner, timeoutSeconds: 120) {
        case .acquired(let acquired): lock = acquired
        case .busy: throw .local("another replica holds the account lock in \(storage.location)")
        case .failed(let message): throw .local("cannot lock the account: \(message)")
        }
        defer { lock.release() }
        let key: SigningKey
        switch Result(catching: { () throws(StorageError) in try backend.load(keyKey, limit: 64 * 1024) }) {
        case .success(let bytes):
            guard let parsed = SigningKey(pem: bytes) else {
                throw .local("\(backend.describe(keyKey)) holds no usable account key; move it away to make a new account")
            }
            key = parsed
        case .failure(.missing):
            do {
                key = try SigningKey.generate(.ecdsaP256)
                try backend.store(keyKey, try key.pem(), secret: true)
            } catch {
                throw .local("cannot create the account key in \(backend.describe(folder)): \(error)")
            }
        case .failure(let error):
            // Unreadable is not absent: a new key would orphan the account the stored one registered.
            throw .local("cannot read the account key: \(error)")
        }
        let client = counted(ACMEClient(directoryURL: settings.directory, http: http, accountKey: key))
        var url = (try? backend.load(accountKey, limit: 64 * 1024)).flatMap { JSONParser.parse($0).root?["url"]?.stringValue }
        if url == nil {
            var binding: (keyID: String, hmacKey: [UInt8])?
            if let external = settings.externalAccount {
                guard let hmacKeyFile, let text = try? Posix.readFile(hmacKeyFile, limit: 4096),
                    let hmacKey = Base64URL.decode(String(decoding: text, as: UTF8.self).trimmingWhitespace())
                else { throw .local("cannot read the External Account Binding HMAC key (base64url) from \(hmacKeyFile ?? "?")") }
                binding = (external.keyID, hmacKey)
            }
            let registered = try client.register(email: settings.email, externalAccount: binding)
            log(.info, "registered an ACME account at \(settings.directory)")
            do {
                try backend.store(accountKey, JSONWriter.bytes(.object([("url", .string(registered))]), pretty: true), secret: true)
            } catch {
                throw .local("cannot store the account in \(backend.describe(folder)): \(error)")
            }
            url = registered
        }
        let accountURL = url!
        account.withLock { $0 = (key, accountURL) }
        return counted(ACMEClient(directoryURL: settings.directory, http: http, accountKey: key, accountURL: accountURL))
    }

    func counted(_ client: ACMEClient) -> ACMEClient {
        client.onBadNonce = { [self] in state.withLock { $0.counters.badNonces += 1 } }
        return client
    }
}
