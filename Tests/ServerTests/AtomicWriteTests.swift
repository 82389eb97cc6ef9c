import Foundation
import Glibc
import Posix
import Synchronization
import TestSupport
import Testing

/// Files written whole (certificates, keys, the account, challenge answers): a unique temporary name
/// created exclusively and private from its first byte, renamed over the target, nothing left behind.
@Suite("Atomic writes")
struct AtomicWriteTests {
    @Test("Mode as asked whatever the umask; concurrent writers of one path never fail and leave no temporary file")
    func concurrentWriters() throws {
        try withTemporaryDirectory { directory in
            let key = directory + "/certificates/a.test/certificate.pem"
            let previous = umask(0o077)
            defer { umask(previous) }
            try Posix.writeFileAtomically(Array("secret".utf8), to: key, mode: 0o600)
            var info = stat()
            #expect(stat(key, &info) == 0 && info.st_mode & 0o777 == 0o600)
            let shared = directory + "/shared.json"
            let failures = Atomic<Int>(0)
            DispatchQueue.concurrentPerform(iterations: 4) { writer in
                for round in 0..<100 {
                    do {
                        try Posix.writeFileAtomically(Array("writer \(writer) round \(round)\n".utf8), to: shared, mode: 0o644)
                    } catch {
                        failures.add(1, ordering: .relaxed)
                    }
                }
            }
            #expect(failures.load(ordering: .relaxed) == 0)
            let final = try String(contentsOfFile: shared, encoding: .utf8)
            #expect(final.hasPrefix("writer ") && final.hasSuffix("round 99\n"), "\(final)")
            #expect(stat(shared, &info) == 0 && info.st_mode & 0o777 == 0o644)
            let left = try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.contains(".tmp-") }
            #expect(left.isEmpty, "\(left)")
        }
    }

    @Test("A symlink where the file goes is replaced, never written through")
    func symlinkTarget() throws {
        try withTemporaryDirectory { directory in
            let outside = directory + "/outside.txt"
            try "untouched".write(toFile: outside, atomically: false, encoding: .utf8)
            let target = directory + "/meta.json"
            #expect(symlink(outside, target) == 0)
            try Posix.writeFileAtomically(Array("{}".utf8), to: target, mode: 0o600)
            #expect(try String(contentsOfFile: outside, encoding: .utf8) == "untouched")
            #expect(try String(contentsOfFile: target, encoding: .utf8) == "{}")
        }
    }
}
