import Synchronization

@testable import ACME

/// A second `Storage`, in memory, to prove the certificate code depends on the interface and nothing
/// else: replicas in one test share one instance. It fails when told to (`fail`), and its clock is
/// the test's (`advance`), so stale locks need no waiting.
final class InMemoryStorage: Storage {
    enum Operation: Sendable { case load, store, delete, list, lock }

    private struct Fault {
        var operation: Operation
        var keySuffix: String
        var remaining: Int
    }

    private struct HeldLock {
        var content: String
        var beatAt: Int
    }

    private struct Contents {
        var values: [String: (bytes: [UInt8], secret: Bool, version: Int)] = [:]
        var locks: [String: HeldLock] = [:]
        var faults: [Fault] = []
        var clock = 1_000_000
        var version = 0
        var operations: [Operation: Int] = [:]
    }

    private let contents = Mutex(Contents())

    var location: String { "memory" }

    func describe(_ key: String) -> String { "memory:\(key)" }

    /// The next `times` operations of this kind on a key ending in `keySuffix` fail.
    func fail(_ operation: Operation, keySuffix: String, times: Int = .max) {
        contents.withLock { $0.faults.append(Fault(operation: operation, keySuffix: keySuffix, remaining: times)) }
    }

    func heal() { contents.withLock { $0.faults = [] } }

    func advance(seconds: Int) { contents.withLock { $0.clock += seconds } }

    func count(_ operation: Operation) -> Int { contents.withLock { $0.operations[operation] ?? 0 } }

    var keys: [String] { contents.withLock { $0.values.keys.sorted() } }

    func isSecret(_ key: String) -> Bool? { contents.withLock { $0.values[key]?.secret } }

    /// Counts the operation; true when an injected fault makes it fail.
    private func faulted(_ operation: Operation, _ key: String, in contents: inout Contents) -> Bool {
        contents.operations[operation, default: 0] += 1
        guard
            let index = contents.faults.firstIndex(where: { $0.operation == operation && key.hasSuffix($0.keySuffix) && $0.remaining > 0 })
        else { return false }
        contents.faults[index].remaining -= 1
        return true
    }

    func load(_ key: String, limit: Int) throws(StorageError) -> [UInt8] {
        let result: Result<[UInt8], StorageError> = contents.withLock { contents in
            if faulted(.load, key, in: &contents) { return .failure(.failed("injected: cannot read \(key)")) }
            guard let value = contents.values[key] else { return .failure(.missing(key)) }
            guard value.bytes.count <= limit else { return .failure(.failed("\(key) is larger than \(limit) bytes")) }
            return .success(value.bytes)
        }
        return try result.get()
    }

    func store(_ key: String, _ value: [UInt8], secret: Bool) throws(StorageError) {
        let failed = contents.withLock { contents -> Bool in
            if faulted(.store, key, in: &contents) { return true }
            contents.version += 1
            contents.values[key] = (value, secret, contents.version)
            return false
        }
        if failed { throw .failed("injected: cannot write \(key)") }
    }

    func delete(_ key: String) {
        contents.withLock { contents in
            // Folders are implicit: one with nothing under it is gone already, one with values stays.
            guard !faulted(.delete, key, in: &contents) else { return }
            contents.values[key] = nil
        }
    }

    func exists(_ key: String) -> Bool {
        contents.withLock { contents in contents.values[key] != nil || contents.values.keys.contains { $0.hasPrefix(key + "/") } }
    }

    func list(_ prefix: String) -> [String] {
        contents.withLock { contents in
            if faulted(.list, prefix, in: &contents) { return [] }
            var names = Set<String>()
            for key in contents.values.keys where key.hasPrefix(prefix + "/") {
                let rest = key.dropFirst(prefix.count + 1)
                names.insert(String(rest.prefix { $0 != "/" }))
            }
            return Array(names)
        }
    }

    func stamp(_ key: String) -> String? { contents.withLock { $0.values[key].map { "v\($0.version)" } } }

    func lock(_ name: String, owner: String, timeoutSeconds: Int) -> StorageLockOutcome {
        let content = "\(owner) \(UInt64.random(in: 0...UInt64.max))"
        enum Step {
            case acquired, busy, failed
        }
        let step = contents.withLock { contents -> Step in
            if faulted(.lock, name, in: &contents) { return .failed }
            if let held = contents.locks[name], contents.clock - held.beatAt <= FileStorage.defaultLockStaleAfter { return .busy }
            contents.locks[name] = HeldLock(content: content, beatAt: contents.clock)
            return .acquired
        }
        switch step {
        // No waiting: the test's clock moves only when the test moves it.
        case .busy: return .busy
        case .failed: return .failed("injected: cannot lock \(name)")
        case .acquired: return .acquired(Handle(storage: self, name: name, content: content))
        }
    }

    func lockHolder(_ name: String) -> String? { contents.withLock { $0.locks[name]?.content } }

    fileprivate func beat(_ name: String, _ content: String) -> Bool {
        contents.withLock { contents in
            guard contents.locks[name]?.content == content else { return false }
            contents.locks[name]?.beatAt = contents.clock
            return true
        }
    }

    fileprivate func release(_ name: String, _ content: String) {
        contents.withLock { contents in
            if contents.locks[name]?.content == content { contents.locks[name] = nil }
        }
    }

    private final class Handle: StorageLockHandle {
        let storage: InMemoryStorage
        let name: String
        let content: String

        init(storage: InMemoryStorage, name: String, content: String) {
            self.storage = storage
            self.name = name
            self.content = content
        }

        var isHeld: Bool { storage.lockHolder(name) == content }
        func heartbeat() -> Bool { storage.beat(name, content) }
        func release() { storage.release(name, content) }
    }
}
